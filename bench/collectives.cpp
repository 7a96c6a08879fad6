// bench_collectives: nccl-tests-style table (bytes, time, algbw, busbw) of our ring
// all_reduce, reduce_scatter and all_gather against Gloo's own new-style allreduce and
// allgather, at 2 and 4 ranks as threads over 127.0.0.1, with the single-thread memcpy
// bandwidth and the raw loopback TCP bandwidth of the same run as yardsticks. `--quick`
// runs a tiny version.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/gloo/gloo_reference_collectives.h"
#include "comm/store/memory_store.h"

namespace {

using Clock = std::chrono::steady_clock;
using zt::comm::Communicator;
using zt::comm::ReduceOp;

// Bus bandwidth factors as nccl-tests defines them: the fraction of the buffer each rank
// must move over its link, so busbw is comparable with the link speed at any world size.
double all_reduce_factor(int n) { return 2.0 * (n - 1) / n; }
double gather_scatter_factor(int n) { return static_cast<double>(n - 1) / n; }

struct OpSpec {
  std::string name;
  double (*factor)(int);
  const char* baseline;  // the row this one is compared with, or nullptr
};

const std::vector<OpSpec>& op_specs() {
  static const std::vector<OpSpec> specs = {
      {"all_reduce (gloo)", all_reduce_factor, nullptr},
      {"all_reduce (zt ring)", all_reduce_factor, "all_reduce (gloo)"},
      {"reduce_scatter (zt ring)", gather_scatter_factor, nullptr},
      {"all_gather (gloo)", gather_scatter_factor, nullptr},
      {"all_gather (zt ring)", gather_scatter_factor, "all_gather (gloo)"},
  };
  return specs;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Best of `repeats` single-thread copies of `bytes`, in GB/s of bytes copied.
double memcpy_gbps(std::size_t bytes, int repeats) {
  std::vector<char> from(bytes, 1), to(bytes, 0);
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    std::memcpy(to.data(), from.data(), bytes);
    best = std::min(best, seconds_since(start));
  }
  if (to[bytes / 2] != 1) std::puts("memcpy failed");  // keeps the copy observable
  return static_cast<double>(bytes) / best / 1e9;
}

// Moves `bytes` through `fd` in both directions at once (a sender and a receiver thread).
void exchange(int fd, std::size_t bytes) {
  std::thread sender([fd, bytes] {
    std::vector<char> chunk(std::size_t{1} << 20, 1);
    for (std::size_t sent = 0; sent < bytes;) {
      const ssize_t n =
          ::send(fd, chunk.data(), std::min(chunk.size(), bytes - sent), MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<std::size_t>(n);
    }
  });
  std::vector<char> chunk(std::size_t{1} << 20);
  for (std::size_t received = 0; received < bytes;) {
    const ssize_t n = ::recv(fd, chunk.data(), chunk.size(), 0);
    if (n <= 0) break;
    received += static_cast<std::size_t>(n);
  }
  sender.join();
}

// Raw TCP over 127.0.0.1, both directions at once, in GB/s per direction: the link the
// collectives run on, measured in the same run.
double loopback_tcp_gbps(std::size_t bytes) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  auto* generic = reinterpret_cast<sockaddr*>(&address);
  if (listener < 0 || ::bind(listener, generic, length) != 0 || ::listen(listener, 1) != 0 ||
      ::getsockname(listener, generic, &length) != 0) {
    return 0;
  }
  const int client = ::socket(AF_INET, SOCK_STREAM, 0);
  if (::connect(client, generic, length) != 0) return 0;
  const int server = ::accept(listener, nullptr, nullptr);
  const auto start = Clock::now();
  std::thread other([server, bytes] { exchange(server, bytes); });
  exchange(client, bytes);
  other.join();
  const double seconds = seconds_since(start);
  ::close(client);
  ::close(server);
  ::close(listener);
  return static_cast<double>(bytes) / seconds / 1e9;
}

// Mean seconds of `iterations` runs of `op` after one warm-up, ranks aligned by a barrier.
double time_op(Communicator& comm, int iterations, const std::function<void()>& op) {
  op();
  double total = 0;
  for (int i = 0; i < iterations; ++i) {
    comm.barrier()->wait();
    const auto start = Clock::now();
    op();
    total += seconds_since(start);
  }
  return total / iterations;
}

int iterations_for(std::size_t bytes, bool quick) {
  if (quick) return 2;
  if (bytes <= (std::size_t{1} << 20)) return 40;
  if (bytes <= (std::size_t{4} << 20)) return 20;
  if (bytes <= (std::size_t{16} << 20)) return 10;
  return 5;
}

// seconds[size][op] on one rank.
using RankTimes = std::vector<std::vector<double>>;

struct BenchOptions {
  bool quick = false;
  std::size_t segment_bytes = zt::comm::CommOptions{}.segment_bytes;
};

RankTimes run_rank(zt::comm::Store& store, int rank, int n, const std::vector<std::size_t>& sizes,
                   const BenchOptions& bench) {
  const bool quick = bench.quick;
  zt::comm::CommOptions options;
  options.segment_bytes = bench.segment_bytes;
  options.group_name = "bench";
  options.timeout = std::chrono::seconds(120);
  auto comm = zt::comm::create_cpu_communicator(store, rank, n, options);
  options.group_name = "bench-gloo-reference";  // its own context: nothing mixes
  zt::comm::GlooReferenceCollectives gloo(store, rank, n, options);
  RankTimes times;
  for (std::size_t bytes : sizes) {
    const std::size_t count = bytes / sizeof(float);
    std::vector<float> data(count, 1e-3f), shard(count / static_cast<std::size_t>(n), 1.0f);
    const auto t =
        zt::Tensor::wrap(data.data(), zt::Shape{static_cast<std::int64_t>(count)}, zt::DType::kF32);
    const auto s = zt::Tensor::wrap(
        shard.data(), zt::Shape{static_cast<std::int64_t>(shard.size())}, zt::DType::kF32);
    const int iterations = iterations_for(bytes, quick);
    std::vector<double> row;
    row.push_back(time_op(*comm, iterations, [&] { gloo.all_reduce_sum(data); }));
    row.push_back(time_op(*comm, iterations, [&] { comm->all_reduce(t, ReduceOp::kSum)->wait(); }));
    row.push_back(
        time_op(*comm, iterations, [&] { comm->reduce_scatter(t, s, ReduceOp::kSum)->wait(); }));
    row.push_back(time_op(*comm, iterations, [&] { gloo.all_gather(shard, data); }));
    row.push_back(time_op(*comm, iterations, [&] { comm->all_gather(s, t)->wait(); }));
    times.push_back(std::move(row));
  }
  return times;
}

void print_table(int n, const std::vector<std::size_t>& sizes,
                 const std::vector<RankTimes>& per_rank, double memcpy_bandwidth,
                 double tcp_bandwidth) {
  std::printf("\n# world_size %d (ranks as threads, Gloo TCP over 127.0.0.1)\n", n);
  std::printf("# %10s  %-26s %9s %11s %11s %13s %10s %9s\n", "bytes", "op", "time_ms", "algbw GB/s",
              "busbw GB/s", "busbw/memcpy", "busbw/tcp", "vs gloo");
  const auto& specs = op_specs();
  for (std::size_t size = 0; size < sizes.size(); ++size) {
    std::vector<double> slowest(specs.size(), 0.0);  // the slowest rank sets the op's time
    for (const auto& rank : per_rank) {
      for (std::size_t op = 0; op < specs.size(); ++op) {
        slowest[op] = std::max(slowest[op], rank[size][op]);
      }
    }
    for (std::size_t op = 0; op < specs.size(); ++op) {
      const double algbw = static_cast<double>(sizes[size]) / slowest[op] / 1e9;
      const double busbw = algbw * specs[op].factor(n);
      std::string versus = "";
      for (std::size_t other = 0; specs[op].baseline && other < specs.size(); ++other) {
        if (specs[other].name == specs[op].baseline) {
          char text[32];
          std::snprintf(text, sizeof text, "%.2fx", slowest[other] / slowest[op]);
          versus = text;
        }
      }
      std::printf("  %10zu  %-26s %9.2f %11.3f %11.3f %13.3f %10.3f %9s\n", sizes[size],
                  specs[op].name.c_str(), slowest[op] * 1e3, algbw, busbw, busbw / memcpy_bandwidth,
                  busbw / tcp_bandwidth, versus.c_str());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions bench;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quick") {
      bench.quick = true;
    } else if (arg == "--segment-bytes" && i + 1 < argc) {
      bench.segment_bytes = std::stoul(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--segment-bytes N]\n", argv[0]);
      return 2;
    }
  }
  const bool quick = bench.quick;
  const std::vector<std::size_t> sizes =
      quick ? std::vector<std::size_t>{std::size_t{1} << 20}
            : std::vector<std::size_t>{std::size_t{1} << 20, std::size_t{4} << 20,
                                       std::size_t{16} << 20, std::size_t{64} << 20};
  const double memcpy_bandwidth = memcpy_gbps(std::size_t{64} << 20, quick ? 2 : 5);
  std::printf("# memcpy, 1 thread, 64 MiB: %.2f GB/s of bytes copied\n", memcpy_bandwidth);
  const double tcp_bandwidth =
      loopback_tcp_gbps(quick ? std::size_t{16} << 20 : std::size_t{256} << 20);
  std::printf("# raw TCP over 127.0.0.1, both directions at once: %.2f GB/s per direction\n",
              tcp_bandwidth);
  std::printf("# busbw = algbw * 2(n-1)/n (all_reduce), * (n-1)/n (reduce_scatter, all_gather);\n");
  std::printf(
      "# time = mean of the slowest rank; 'vs gloo' = gloo time / zt time; "
      "zt segments of %zu bytes\n",
      bench.segment_bytes);
  for (int n : {2, 4}) {
    zt::comm::MemoryStore store;
    std::vector<RankTimes> per_rank(static_cast<std::size_t>(n));
    std::vector<std::thread> ranks;
    for (int rank = 0; rank < n; ++rank) {
      ranks.emplace_back([&, rank] {
        per_rank[static_cast<std::size_t>(rank)] = run_rank(store, rank, n, sizes, bench);
      });
    }
    for (auto& rank : ranks) rank.join();
    print_table(n, sizes, per_rank, memcpy_bandwidth, tcp_bandwidth);
  }
  return 0;
}
