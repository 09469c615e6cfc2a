#include "output/function_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

namespace profcollect {
namespace {

using Order = std::vector<uint32_t>;
using Functions = std::vector<OrderFunction>;
using Calls = std::vector<CallEdge>;

size_t position(const Order& order, uint32_t f) {
  return std::find(order.begin(), order.end(), f) - order.begin();
}

TEST(FunctionOrderTest, UnrelatedFunctionsGoByDensity) {
  // Densities 1, 4, 0.5, 2; function 4 has no samples and is left out.
  const Functions functions = {{100, 100}, {50, 200}, {400, 200}, {100, 200}, {100, 0}};
  EXPECT_EQ(call_chain_order(functions, Calls{}), (Order{1, 3, 0, 2}));
}

TEST(FunctionOrderTest, CallerComesBeforeItsCallee) {
  // The callee is denser, but joins its caller's cluster after it.
  const Functions functions = {{100, 50}, {100, 100}};
  EXPECT_EQ(call_chain_order(functions, Calls{{0, 1, 100}}), (Order{0, 1}));
  EXPECT_EQ(call_chain_order(functions, Calls{{1, 0, 50}}), (Order{1, 0}));
}

TEST(FunctionOrderTest, HotPairIsMergedBetweenOthers) {
  // 2 calls 3 nearly every time 3 runs; 0 and 1 are unrelated, of densities between theirs.
  const Functions functions = {{100, 300}, {100, 250}, {100, 500}, {100, 100}};
  const Order order = call_chain_order(functions, Calls{{2, 3, 90}});
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(position(order, 3), position(order, 2) + 1);
  // The cluster {2, 3} has density 3: after 0 (3 as well, but a lower index) and before 1.
  EXPECT_EQ(order, (Order{0, 2, 3, 1}));
}

TEST(FunctionOrderTest, CalleeJoinsItsMostFrequentCaller) {
  // 3 is called by 0 (10 times) and 1 (80 times): it goes after 1.
  const Functions functions = {{100, 1000}, {100, 900}, {100, 10}, {100, 90}};
  const Order order = call_chain_order(functions, Calls{{0, 3, 10}, {1, 3, 80}, {2, 0, 1}});
  EXPECT_EQ(position(order, 3), position(order, 1) + 1);
}

TEST(FunctionOrderTest, ClusterSizeLimitIsRespected) {
  // Two functions of 600 KiB with a hot call: together past 1 MiB, so not merged.
  const uint64_t kib = 1024;
  const Functions functions = {{600 * kib, 1000}, {600 * kib, 4000}};
  const Calls calls = {{0, 1, 4000}};
  EXPECT_EQ(call_chain_order(functions, calls), (Order{1, 0}));
  CallChainOptions options;
  options.max_cluster_size = 2048 * kib;
  EXPECT_EQ(call_chain_order(functions, calls, options), (Order{0, 1}));
  // A chain 0 -> 1 -> 2 -> 3 of 400 KiB functions: clusters stop growing at 1 MiB.
  const Functions chain(4, OrderFunction{400 * kib, 1000});
  const Calls chain_calls = {{0, 1, 1000}, {1, 2, 1000}, {2, 3, 1000}};
  const Order order = call_chain_order(chain, chain_calls);
  EXPECT_EQ(order.size(), 4u);
  // Taken by index at equal density: 1 joins 0, 2 joins {0, 1} (1200 KiB: no), 3 joins 2.
  EXPECT_EQ(order, (Order{0, 1, 2, 3}));
}

TEST(FunctionOrderTest, DenseCallerIsNotDilutedByABigCallee) {
  // Caller: 100 bytes, 1000 samples (density 10). Callee: 100 KiB with 2000 samples: merged
  // density about 0.03, more than 8 times below the caller's.
  const Functions functions = {{100, 1000}, {100 * 1024, 2000}};
  const Order order = call_chain_order(functions, Calls{{0, 1, 2000}});
  EXPECT_EQ(order, (Order{0, 1}));  // by density anyway; the merge check is below
  // Put a function of density between them: a merged cluster would come after it.
  const Functions three = {{100, 1000}, {100 * 1024, 2000}, {100, 500}};
  EXPECT_EQ(call_chain_order(three, Calls{{0, 1, 2000}}), (Order{0, 2, 1}));
  // With the check off, the callee joins its caller.
  CallChainOptions options;
  options.max_density_degradation = 1e9;
  EXPECT_EQ(call_chain_order(three, Calls{{0, 1, 2000}}, options), (Order{2, 0, 1}));
}

TEST(FunctionOrderTest, RareCallerIsNotFollowed) {
  // 1 runs 1000 times but 0 calls it only 50 times (5%): no merge, 1 goes by its own density.
  const Functions functions = {{100, 100}, {100, 1000}};
  EXPECT_EQ(call_chain_order(functions, Calls{{0, 1, 50}}), (Order{1, 0}));
  EXPECT_EQ(call_chain_order(functions, Calls{{0, 1, 150}}), (Order{0, 1}));
}

TEST(FunctionOrderTest, CallsMakeAFunctionHotAndSelfCallsDoNothing) {
  // 1 has no samples of its own but is called: it is placed. 2 only calls itself.
  const Functions functions = {{100, 100}, {100, 0}, {100, 0}};
  EXPECT_EQ(call_chain_order(functions, Calls{{0, 1, 100}, {2, 2, 50}}), (Order{0, 1}));
  // Parallel call edges add up: 30 + 30 of 500 samples passes 10%.
  const Functions two = {{100, 100}, {100, 500}};
  EXPECT_EQ(call_chain_order(two, Calls{{0, 1, 30}, {0, 1, 30}}), (Order{0, 1}));
}

TEST(FunctionOrderTest, EmptyAndBadInput) {
  EXPECT_EQ(call_chain_order(Functions{}, Calls{}), Order{});
  EXPECT_EQ(call_chain_order(Functions{{10, 0}}, Calls{}), Order{});
  EXPECT_EQ(call_chain_order(Functions{{0, 5}}, Calls{}), (Order{0}));
  EXPECT_THROW(call_chain_order(Functions{{10, 1}}, Calls{{0, 1, 1}}), std::invalid_argument);
}

TEST(FunctionOrderTest, PropertyRandomCallGraphs) {
  // Every hot function once, callers whose clusters took their callee right before them,
  // deterministic.
  std::mt19937_64 rng(42);
  for (int round = 0; round < 50; ++round) {
    const uint32_t n = 1 + rng() % 300;
    Functions functions(n);
    for (OrderFunction& f : functions) {
      f.size = 1 + rng() % 5000;
      f.samples = rng() % 3 == 0 ? 0 : rng() % 10000;
    }
    Calls calls;
    for (uint32_t i = rng() % (3 * n); i > 0; --i) {
      calls.push_back({uint32_t(rng() % n), uint32_t(rng() % n), rng() % 5000});
    }
    std::vector<bool> hot(n, false);
    for (uint32_t f = 0; f < n; ++f) hot[f] = functions[f].samples > 0;
    for (const CallEdge& c : calls)
      hot[c.callee] = hot[c.callee] || (c.count > 0 && c.caller != c.callee);
    const Order order = call_chain_order(functions, calls);
    Order sorted = order, expected;
    std::sort(sorted.begin(), sorted.end());
    for (uint32_t f = 0; f < n; ++f) {
      if (hot[f]) expected.push_back(f);
    }
    ASSERT_EQ(sorted, expected) << "round " << round;
    ASSERT_EQ(call_chain_order(functions, calls), order) << "round " << round;
  }
}

TEST(FunctionOrderTest, LargeCallGraphFinishes) {
  std::mt19937_64 rng(100000);
  const uint32_t n = 100000;
  Functions functions(n);
  for (OrderFunction& f : functions) f = {16 + rng() % 4000, rng() % 4 == 0 ? 0 : rng() % 100000};
  Calls calls;
  for (uint32_t i = 0; i < 4 * n; ++i) {
    calls.push_back({uint32_t(rng() % n), uint32_t(rng() % n), rng() % 10000});
  }
  const auto start = std::chrono::steady_clock::now();
  const Order order = call_chain_order(functions, calls);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GT(order.size(), n / 2);
  std::printf("%u functions, %zu calls: %.1f ms\n", n, calls.size(),
              std::chrono::duration<double, std::milli>(took).count());
}

}  // namespace
}  // namespace profcollect
