// GemmPlanCache: whether a GEMM with an epilogue runs fused in the vendor library (cuBLASLt)
// or unfused (the plain GEMM, then the backend's own kernels), decided once per call geometry
// and kept with the fused plan. Host code, no CUDA header, tested on the CPU.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "core/dtype.h"

namespace zt::nn {

// Note [Fused when offered]: cuBLASLt's heuristic answers per combination of shape, dtypes,
// epilogue and the alignment declared for each operand, and some combinations get no
// algorithm at all (f32 GELU_AUX_BIAS, BGRADB with beta 1 on bf16 inputs and an f32 output,
// operands 2 or 4 bytes aligned). A training run must not stop on that: the backend asks
// once per GemmPlanKey, keeps the descriptors and the algorithm when an algorithm is offered,
// and otherwise runs the same arithmetic unfused, saying so once per key on stderr. Calls
// that agree on the key (every layer of a model, every micro-batch) reuse the decision; only
// the operand addresses are bound per call.

// What cuBLASLt's answer depends on. Strides are the row strides as stored, in elements.
struct GemmPlanKey {
  std::int64_t m = 0, n = 0, k = 0;
  bool transpose_a = false, transpose_b = false;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  DType in_dtype = DType::kF32;
  DType out_dtype = DType::kF32;
  std::string_view epilogue;       // a static name, one per epilogue: "DEFAULT", "DGELU_BGRAD", ...
  DType bias_dtype = DType::kF32;  // of the bias or bias gradient the epilogue reads or writes
  std::uint32_t alignment_a_bytes = 0, alignment_b_bytes = 0, alignment_c_bytes = 0;
  std::uint64_t workspace_bytes = 0;

  friend bool operator==(const GemmPlanKey&, const GemmPlanKey&) = default;
  friend auto operator<=>(const GemmPlanKey&, const GemmPlanKey&) = default;
};

// The call as a log line names it: "(m 10, n 36, k 24) A^T, bf16 -> f32, epilogue BGRADB
// (f32 bias), alignment A 4 B 16 C 16 bytes".
std::string describe(const GemmPlanKey& key);

// The alignment a library may assume for a matrix at `address` whose rows lie `row_stride`
// elements of `element_bytes` apart: the largest power of two, at most 256, dividing both the
// address and the row stride in bytes (every row must be as aligned as the first).
std::uint32_t operand_alignment_bytes(const void* address, std::int64_t row_stride,
                                      std::size_t element_bytes);

// Writes "zerotrain: <line>" to stderr.
void log_to_stderr(const std::string& line);

// The decision per key (Note [Fused when offered]). Plan is the backend's fused call (its
// descriptors and algorithm); the cache owns it for its own lifetime, through a shared_ptr so
// that a header may hold a cache of a Plan it only declares. Thread-safe: one mutex guards
// the map, and a plan handed out stays valid until the cache is destroyed.
template <typename Plan>
class GemmPlanCache {
 public:
  using Log = std::function<void(const std::string&)>;

  explicit GemmPlanCache(Log log = log_to_stderr) : log_(std::move(log)) {}

  // The fused plan for `key`, or nullptr to run it unfused. `offer(key)` returns the
  // library's plan as a std::unique_ptr<Plan> (made where Plan is complete), null when it offers no
  // algorithm; it is called at the first call of each key only, and a refusal is logged then.
  template <typename Offer>
  Plan* find(const GemmPlanKey& key, Offer&& offer) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = decisions_.find(key);
    if (it == decisions_.end()) {
      Decision decision{std::forward<Offer>(offer)(key), false};
      if (decision.fused == nullptr) {
        log_("cuBLASLt offers no algorithm for the GEMM " + describe(key) +
             ": running the plain GEMM and the bias/GELU kernels for it instead");
      }
      it = decisions_.emplace(key, std::move(decision)).first;
    }
    return it->second.refused ? nullptr : it->second.fused.get();
  }

  // `key`'s fused call failed as the library ran it (`why`): from now on it runs unfused.
  // Logged once; the plan stays owned, so a caller still holding it is not left dangling.
  void refuse(const GemmPlanKey& key, const std::string& why) {
    const std::lock_guard<std::mutex> lock(mutex_);
    Decision& decision = decisions_[key];
    if (decision.refused) return;
    decision.refused = true;
    log_("cuBLASLt refused the fused GEMM " + describe(key) + " (" + why +
         "): running the plain GEMM and the bias/GELU kernels for it instead");
  }

  std::size_t size() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return decisions_.size();
  }

 private:
  struct Decision {
    std::shared_ptr<Plan> fused;  // null: no algorithm was offered
    bool refused = false;         // the fused call failed when it ran
  };

  Log log_;
  mutable std::mutex mutex_;
  std::map<GemmPlanKey, Decision> decisions_;  // guarded by mutex_
};

}  // namespace zt::nn
