// Tensor views share storage, stay in bounds and keep the storage alive.
#include "core/tensor.h"

#include <gtest/gtest.h>

namespace zt {
namespace {

TEST(Tensor, ZerosAreZeroAndTracked) {
  MemoryTracker tracker(Device::cpu());
  Tensor t = Tensor::zeros(Shape{3, 5}, DType::kF32, tracker, MemoryCategory::kParameters);
  EXPECT_EQ(t.numel(), 15);
  EXPECT_EQ(t.nbytes(), 60u);
  for (float v : t.span<float>()) EXPECT_EQ(v, 0.0f);
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kParameters), 60);
}

TEST(Tensor, ViewsShareStorageAndOffset) {
  MemoryTracker tracker(Device::cpu());
  Tensor flat = Tensor::zeros(Shape{12}, DType::kF32, tracker, MemoryCategory::kParameters);
  Tensor weight = flat.view(2, Shape{2, 3});
  weight.data_as<float>()[0] = 7.0f;
  EXPECT_EQ(flat.data_as<float>()[2], 7.0f);
  Tensor reshaped = weight.reshape(Shape{3, 2});
  EXPECT_EQ(reshaped.data(), weight.data());
  Tensor rows = flat.reshape(Shape{4, 3}).slice_rows(1, 3);
  EXPECT_EQ(rows.shape(), (Shape{2, 3}));
  EXPECT_EQ(rows.data_as<float>(), flat.data_as<float>() + 3);
}

TEST(Tensor, ViewKeepsStorageAliveAfterOwnerGoes) {
  MemoryTracker tracker(Device::cpu());
  Tensor view;
  {
    Tensor owner = Tensor::zeros(Shape{8}, DType::kBF16, tracker, MemoryCategory::kActivations);
    view = owner.view(4, Shape{4});
  }
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kActivations), 16);
  view = Tensor();
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kActivations), 0);
}

TEST(Tensor, OutOfBoundsViewsAndWrongDTypeReadsAreInternalErrors) {
  MemoryTracker tracker(Device::cpu());
  Tensor t = Tensor::zeros(Shape{4}, DType::kF32, tracker, MemoryCategory::kWorkspace);
  EXPECT_THROW(t.view(2, Shape{3}), InternalError);
  EXPECT_THROW(t.reshape(Shape{5}), InternalError);
  EXPECT_THROW(t.data_as<BF16>(), InternalError);
  EXPECT_THROW(t.slice_rows(2, 5), InternalError);
}

TEST(Tensor, ZeroElementTensorsAreValid) {
  MemoryTracker tracker(Device::cpu());
  Tensor t = Tensor::zeros(Shape{0, 4}, DType::kF32, tracker, MemoryCategory::kWorkspace);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.span<float>().size(), 0u);
}

TEST(Tensor, MovedFromTensorIsUndefinedAndDoesNotKeepStorage) {
  MemoryTracker tracker(Device::cpu());
  Tensor a = Tensor::zeros(Shape{4}, DType::kF32, tracker, MemoryCategory::kGradients);
  Tensor b = std::move(a);
  EXPECT_FALSE(a.defined());  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  EXPECT_TRUE(b.defined());
  b = Tensor();
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kGradients), 0);
}

TEST(Tensor, WrapDoesNotTrack) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  Tensor t = Tensor::wrap(data, Shape{2, 3}, DType::kF32);
  EXPECT_EQ(t.view(3, Shape{3}).data_as<float>()[0], 4.0f);
  EXPECT_EQ(Shape({2, 3}).to_string(), "(2, 3)");
}

}  // namespace
}  // namespace zt
