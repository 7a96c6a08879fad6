// The address of this machine that packets to a given host leave from: what a rank on a
// node should listen on and announce so that the node at `host` (and its peers on the
// same network) can reach it, whatever the host name resolves to.
#pragma once

#include <string>

namespace zt::comm {

// `host` is a name or an address (IPv4 or IPv6). No packet is sent: the kernel picks the
// route for a UDP socket connected to host. Loopback hosts give a loopback address.
// Throws CommError naming host when it does not resolve or no route leads there.
std::string local_address_toward(const std::string& host);

}  // namespace zt::comm
