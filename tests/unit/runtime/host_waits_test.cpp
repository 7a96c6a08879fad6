// The trainer's host waits per step (Note [One host wait per step]) counted through a
// recording device context, and the host check of token ids before anything is written.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "core/error.h"
#include "runtime/engine/trainer.h"

namespace zt::engine {
namespace {

// What blocks the host: a stream's or the context's synchronize(). Before the loss and the
// norm were read once per step, the CUDA loss waited per micro-batch and the norm per slice
// (sum_of_squares returned a double: 7 waits in this step, with stage 2's slices).
struct WaitCounts {
  std::atomic<int> waits{0};
  std::atomic<int> ops{0};  // every DeviceOps call: nothing ran while this stays put
};

class CountingStream final : public DeviceStream {
 public:
  CountingStream(DeviceStream& inner, WaitCounts& counts) : inner_(inner), counts_(counts) {}
  const Device& device() const override { return inner_.device(); }
  const std::string& name() const override { return inner_.name(); }
  DeviceEvent record() override { return inner_.record(); }
  void wait(const DeviceEvent& event) override { inner_.wait(event); }
  void synchronize() override {
    ++counts_.waits;
    inner_.synchronize();
  }
  bool is_inline() const override { return inner_.is_inline(); }

 private:
  DeviceStream& inner_;
  WaitCounts& counts_;
};

class CountingOps final : public DeviceOps {
 public:
  CountingOps(DeviceOps& inner, WaitCounts& counts) : inner_(inner), counts_(counts) {}
  void fill(const Tensor& v, float value) override { ++counts_.ops, inner_.fill(v, value); }
  void fill_zero_bytes(const Tensor& v) override { ++counts_.ops, inner_.fill_zero_bytes(v); }
  void scale(const Tensor& v, float f) override { ++counts_.ops, inner_.scale(v, f); }
  void axpby(float a, const Tensor& x, float b, const Tensor& y) override {
    ++counts_.ops, inner_.axpby(a, x, b, y);
  }
  // Enqueued without a wait; reading it waits (counted where the trainer or strategy waits
  // on the stream first; the CPU's value is known at once).
  HostScalar sum_of_squares(const Tensor& v) override {
    ++counts_.ops;
    return inner_.sum_of_squares(v);
  }
  void cast(const Tensor& s, const Tensor& d) override { ++counts_.ops, inner_.cast(s, d); }
  void copy(const Tensor& s, const Tensor& d) override { ++counts_.ops, inner_.copy(s, d); }
  void copy_on(const Tensor& s, const Tensor& d, DeviceStream& stream) override {
    ++counts_.ops, inner_.copy_on(s, d, stream);
  }

 private:
  DeviceOps& inner_;
  WaitCounts& counts_;
};

// The CPU context, every host wait counted.
class CountingContext final : public DeviceContext {
 public:
  CountingContext()
      : inner_(make_cpu_device_context()),
        compute_(inner_->compute_stream(), counts_),
        copy_(inner_->copy_stream(), counts_),
        ops_(inner_->ops(), counts_) {}

  const Device& device() const override { return inner_->device(); }
  MemoryTracker& tracker() override { return inner_->tracker(); }
  DeviceAllocator& allocator() override { return inner_->allocator(); }
  DeviceStream& compute_stream() override { return compute_; }
  DeviceStream& copy_stream() override { return copy_; }
  DeviceOps& ops() override { return ops_; }
  DeviceAllocator& host_staging_allocator() override { return inner_->host_staging_allocator(); }
  void synchronize() override {
    ++counts_.waits;
    inner_->synchronize();
  }
  WaitCounts& counts() { return counts_; }

 private:
  WaitCounts counts_;
  std::unique_ptr<DeviceContext> inner_;
  CountingStream compute_;
  CountingStream copy_;
  CountingOps ops_;
};

Config gpt_config(std::int64_t grad_accum_steps) {
  return parse_config_text(
      "", "host_waits_test.toml",
      {"model.type=gpt", "model.n_layer=2", "model.n_head=2", "model.d_model=32",
       "model.vocab_size=32", "model.seq_len=16", "train.steps=3", "train.micro_batch_size=2",
       "train.grad_accum_steps=" + std::to_string(grad_accum_steps), "zero.stage=2",
       "optimizer.max_grad_norm=1.0"});
}

struct CountedRun {
  comm::MemoryStore store;
  std::unique_ptr<comm::Communicator> comm = comm::create_cpu_communicator(store, 0, 1);
  CountingContext device;
};

// The host waits of step 2 (step 1 also sets things up).
int waits_in_second_step(std::int64_t grad_accum_steps) {
  CountedRun run;
  Trainer trainer(gpt_config(grad_accum_steps), comm::CommLanes::single(*run.comm), run.device,
                  quiet_trainer_options());
  const std::unique_ptr<data::BatchSource> source =
      training_parts_from_config(trainer.config()).source;
  trainer.step(trainer.load_step_batch(*source, 1));
  const data::Batch batch = trainer.load_step_batch(*source, 2);
  const int before = run.device.counts().waits;
  trainer.step(batch);
  return run.device.counts().waits - before;
}

TEST(HostWaits, AStepWaitsAsOftenWithFourMicroBatchesAsWithOne) {
  const int one = waits_in_second_step(1);
  const int four = waits_in_second_step(4);
  EXPECT_EQ(four, one) << "a host wait per micro-batch";
  // The loss read, the norm's slices, and one all-reduce of the loss, its rows and the
  // norm's parts (four before they were folded into one collective).
  EXPECT_EQ(four, 3);
}

TEST(HostWaits, ABadTokenIdIsRefusedNamingRowAndPositionBeforeAnythingIsWritten) {
  CountedRun run;
  Trainer trainer(gpt_config(4), comm::CommLanes::single(*run.comm), run.device,
                  quiet_trainer_options());
  const std::unique_ptr<data::BatchSource> source =
      training_parts_from_config(trainer.config()).source;
  data::Batch batch = trainer.load_step_batch(*source, 1);
  // Row 5 is micro-batch 2's second row: found before micro-batch 0 runs.
  batch.inputs.data_as<std::int32_t>()[5 * 16 + 7] = 32;
  const int ops_before = run.device.counts().ops;
  try {
    trainer.step(batch);
    ADD_FAILURE() << "a token id outside the vocabulary was accepted";
  } catch (const FormatError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("token id 32 at batch row 5, position 7"), std::string::npos) << message;
  }
  EXPECT_EQ(run.device.counts().ops, ops_before) << "the device ran work for a refused batch";
  EXPECT_EQ(trainer.steps_done(), 0);
}

}  // namespace
}  // namespace zt::engine
