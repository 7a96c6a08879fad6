// expand_slurm_nodelist against the forms `scontrol show hostnames` expands, and the
// malformed lists it must refuse by name.
#include "runtime/launch/slurm_nodelist.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace zt::launch {
namespace {

using Hosts = std::vector<std::string>;

Hosts expand(const std::string& list) { return expand_slurm_nodelist(list, "SLURM_JOB_NODELIST"); }

TEST(SlurmNodelist, PlainNamesAndCommaSeparatedNames) {
  EXPECT_EQ(expand("node1"), Hosts{"node1"});
  EXPECT_EQ(expand("a,b-2,c.example.org"), (Hosts{"a", "b-2", "c.example.org"}));
}

TEST(SlurmNodelist, RangesAndSinglesInOneBracketInOrder) {
  EXPECT_EQ(expand("node[1-3,5]"), (Hosts{"node1", "node2", "node3", "node5"}));
  EXPECT_EQ(expand("node[7]"), Hosts{"node7"});
}

TEST(SlurmNodelist, ZeroPaddingIsKept) {
  EXPECT_EQ(expand("gpu[008-011]"), (Hosts{"gpu008", "gpu009", "gpu010", "gpu011"}));
  EXPECT_EQ(expand("n[09-10]"), (Hosts{"n09", "n10"}));
}

TEST(SlurmNodelist, SuffixesOtherItemsAndSeveralBrackets) {
  EXPECT_EQ(expand("n[1-2]-ib,login7"), (Hosts{"n1-ib", "n2-ib", "login7"}));
  EXPECT_EQ(expand("r[1-2]n[3-4]"), (Hosts{"r1n3", "r1n4", "r2n3", "r2n4"}));
  EXPECT_EQ(expand("a[1,3],b[2-3]"), (Hosts{"a1", "a3", "b2", "b3"}));
}

TEST(SlurmNodelist, MalformedListsNameTheVariableAndTheList) {
  const char* malformed[] = {"",          "node[1-3", "node1-3]", "node[3-1]", "node[]",
                             "node[a-b]", "node[1-]", "a,,b",     "n[[1]]",    "n[1-2000000]"};
  for (const char* list : malformed) {
    try {
      expand(list);
      ADD_FAILURE() << "'" << list << "' was accepted";
    } catch (const UsageError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("SLURM_JOB_NODELIST='" + std::string(list) + "'"), std::string::npos)
          << message;
    }
  }
}

}  // namespace
}  // namespace zt::launch
