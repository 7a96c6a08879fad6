// StoreTable, the TCP store server's single-threaded core: values with Store semantics and
// the parked-waiter index (Note [Parked waiters]).
#include "comm/store/store_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "core/error.h"

namespace zt::comm {
namespace {

TEST(StoreTable, ParkedWaiterIsHandedBackOnceWhenItsKeyIsSet) {
  StoreTable table;
  table.park("a", 1);
  table.park("a", 2);
  table.park("b", 3);
  EXPECT_EQ(table.parked_count(), 3u);
  table.set("a", "x");
  EXPECT_EQ(table.take_parked("a"), (std::vector<StoreTable::WaiterId>{1, 2}));
  EXPECT_TRUE(table.take_parked("a").empty());
  EXPECT_EQ(table.parked_count(), 1u);
}

TEST(StoreTable, UnparkRemovesOnlyThatWaiter) {
  StoreTable table;
  table.park("a", 1);
  table.park("a", 2);
  table.unpark("a", 1);
  table.unpark("a", 7);        // never parked: a no-op
  table.unpark("missing", 2);  // wrong key: a no-op
  EXPECT_EQ(table.parked_count(), 1u);
  EXPECT_EQ(table.take_parked("a"), (std::vector<StoreTable::WaiterId>{2}));
}

TEST(StoreTable, MissingListsUnsetKeysInOrder) {
  StoreTable table;
  table.set("b", "1");
  EXPECT_EQ(table.missing({"c", "b", "a"}), (std::vector<std::string>{"c", "a"}));
  EXPECT_TRUE(table.erase("b"));
  EXPECT_EQ(table.missing({"b"}), (std::vector<std::string>{"b"}));
}

TEST(StoreTable, AddThatWouldOverflowIsACommErrorAndLeavesTheCounter) {
  StoreTable table;
  table.add("c", std::numeric_limits<std::int64_t>::max());
  EXPECT_THROW(table.add("c", 1), CommError);
  EXPECT_EQ(*table.find("c"), std::to_string(std::numeric_limits<std::int64_t>::max()));
}

}  // namespace
}  // namespace zt::comm
