// Slurm's compressed host lists ("node[01-03,7],gpu5"): expanding them into host names, as
// `scontrol show hostnames` does, so a rank can find the job's first host by itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace zt::launch {

// The hosts of a list such as "node[1-3,5]", "n[01-02]-ib,login7" or "r[1-2]n[1-2]", in
// Slurm's order: comma-separated items, each bracket a set of numbers or ranges whose
// zero padding is kept, several brackets in one item multiplied out left to right.
// Throws UsageError naming `variable` and the list when it is malformed (unbalanced
// brackets, an empty item, a range that runs backwards) or expands to over a million hosts.
std::vector<std::string> expand_slurm_nodelist(std::string_view list, const std::string& variable);

}  // namespace zt::launch
