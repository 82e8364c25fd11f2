// The simulator's layers through their own interfaces (core/src/sim): the event queue, the
// network's send/receive matching and its two backends' timing, and the collective-algorithm
// registry against the config spellings. The whole simulator is tested in simulate_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <unordered_map>

#include "chakra/astra/config.h"
#include "chakra/support/error.h"
#include "sim/collectives/collective.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/flat_index.h"
#include "sim/network/network.h"
#include "sim/network/symmetry.h"

namespace {

using namespace chakra;
using namespace chakra::astra;
using namespace chakra::sim;

// Records (time, handler arg) of every delivery.
struct Recorder : MessageSink {
  explicit Recorder(const EventQueue& q) : queue(q) {}
  void deliver(const Handler& h) override { got.emplace_back(queue.now(), h.arg); }
  const EventQueue& queue;
  std::vector<std::pair<Tick, uint64_t>> got;
};

// Runs `fn` at time `t` (to post a receive later than a message's arrival).
struct At : EventSink {
  explicit At(EventQueue& q) : queue(q), id(q.add_sink(*this)) {}
  void at(Tick t, std::function<void()> f) {
    fns.push_back(std::move(f));
    queue.schedule(t, id, 0, static_cast<uint32_t>(fns.size() - 1));
  }
  void on_event(const Event& e) override { fns[e.a](); }
  EventQueue& queue;
  uint8_t id;
  std::deque<std::function<void()>> fns;  // a deque: a running function may add more
};

NetworkConfig network(const char* topology, uint32_t npus) {
  return parse_network(std::string("topology: [ ") + topology + " ]\nnpus_count: [ " + std::to_string(npus) +
                           " ]\nbandwidth: [ 1 ]\nlatency: [ 100 ]\n",
                       "test.yml");
}

void run_all(EventQueue& q) {
  while (q.run_next()) {}
}

// 1 GB/s read as GiB/s: 1.073741824 bytes per ns.
Tick serial(uint64_t bytes) { return Tick(double(bytes) / 1.073741824); }

TEST(SimEventQueue, SameTimeEventsRunInSchedulingOrder) {
  EventQueue q("w");
  At at(q);
  std::vector<int> order;
  at.at(50, [&] { order.push_back(2); });
  at.at(10, [&] { order.push_back(1); });
  at.at(50, [&] { order.push_back(3); });
  run_all(q);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(q.events_run(), 3u);
  EXPECT_EQ(q.now(), 50u);
  EXPECT_THROW(q.to_tick(1e30), Error);  // past the 64-bit clock
}

TEST(SimEventQueue, EventsScheduledForNowRunAfterThoseAlreadyDue) {
  EventQueue q("w");
  At at(q);
  std::vector<std::string> order;
  at.at(0, [&] {
    order.push_back("a0");
    at.at(0, [&] { order.push_back("c0"); });  // the current time, while it runs
    at.at(10, [&] { order.push_back("d10"); });
  });
  at.at(10, [&] {
    order.push_back("a10");
    at.at(10, [&] { order.push_back("e10"); });
  });
  at.at(0, [&] { order.push_back("b0"); });
  at.at(10, [&] { order.push_back("b10"); });
  EXPECT_EQ(q.pending(), 4u);
  run_all(q);
  EXPECT_EQ(order, (std::vector<std::string>{"a0", "b0", "c0", "a10", "b10", "d10", "e10"}));
  EXPECT_EQ(q.pending(), 0u);
  at.at(10, [&] { order.push_back("f10"); });  // the queue ran dry at 10 and takes more
  EXPECT_TRUE(q.run_next());
  EXPECT_EQ(order.back(), "f10");
  EXPECT_FALSE(q.run_next());
}

// Sends and receives posted in random order over a few streams: the k-th send of a
// (tag, src, dst, size) meets its k-th receive, told at max(arrival, receive posted).
// The open-addressing index against std::unordered_map under random adds and erases, with a
// hash that sends many keys to a few home slots (long probe runs that wrap around the array end,
// where deletion has to move entries back) and a good one.
TEST(SimFlatIndex, RandomAddsAndErasesAgreeWithAHashMap) {
  struct Clumped {
    size_t operator()(uint64_t k) const { return ~size_t{0} - (k % 5) * 3; }  // homes at the end, whatever the size
  };
  auto check = [](auto index, const char* what) {
    std::unordered_map<uint64_t, uint32_t> truth;
    std::mt19937_64 rng(7);
    uint32_t next = 0;
    for (int step = 0; step < 20000; ++step) {
      const uint64_t key = rng() % 300;
      if (rng() % 3 == 0) {
        index.erase(key);
        truth.erase(key);
      } else {
        bool added = false;
        uint32_t& id = index.slot_for(key, added);
        ASSERT_EQ(added, !truth.count(key)) << what << " step " << step;
        if (added) id = truth[key] = next++;
        ASSERT_EQ(id, truth[key]) << what << " step " << step;
      }
      ASSERT_EQ(index.size(), truth.size()) << what << " step " << step;
      if (step % 97 == 0)
        for (uint64_t k = 0; k < 300; ++k) {
          const uint32_t* found = index.find(k);
          auto it = truth.find(k);
          ASSERT_EQ(found != nullptr, it != truth.end()) << what << " key " << k << " step " << step;
          if (found) {
            ASSERT_EQ(*found, it->second) << what << " key " << k;
          }
        }
    }
  };
  check(FlatIndex<uint64_t, Clumped>{}, "clumped");
  check(FlatIndex<uint64_t, IntegerHash>{}, "spread");
}

TEST(SimNetwork, RandomlyPostedStreamsMatchInOrder) {
  NetworkConfig net = network("FullyConnected", 3);
  EventQueue q("w");
  Recorder r(q);
  At at(q);
  auto n = make_network(Backend::CongestionUnaware, q, r, net);
  const Tick delay = 100 + serial(64);
  std::mt19937 rng(7);
  std::map<uint64_t, Tick> expected;  // handler arg -> when told
  std::map<std::tuple<int, uint32_t, uint32_t>, std::pair<std::vector<Tick>, std::vector<std::pair<Tick, uint64_t>>>>
      streams;
  uint64_t arg = 1;
  for (int i = 0; i < 400; ++i) {
    const Tick t = rng() % 2000;
    const int tag = int(rng() % 2);
    const uint32_t src = rng() % 3, dst = (src + 1 + rng() % 2) % 3;
    auto& [sends, recvs] = streams[{tag, src, dst}];
    const uint64_t a = arg++;
    if (rng() % 2) {
      sends.push_back(t);
      at.at(t, [&n, src, dst, tag, a] { n->send(src, dst, 64, tag, Handler{1, src, a}); });
      expected[a] = t + delay;
    } else {
      recvs.emplace_back(t, a);
      at.at(t, [&n, src, dst, tag, a] { n->recv(dst, src, 64, tag, Handler{1, dst, a}); });
    }
  }
  for (auto& [key, s] : streams) {
    auto& [sends, recvs] = s;
    // Posting order is time order, ties in scheduling order: stable sorts keep the latter.
    std::stable_sort(sends.begin(), sends.end());
    std::stable_sort(recvs.begin(), recvs.end(), [](auto& x, auto& y) { return x.first < y.first; });
    for (size_t k = 0; k < std::min(sends.size(), recvs.size()); ++k)
      expected[recvs[k].second] = std::max(recvs[k].first, sends[k] + delay);
  }
  run_all(q);
  std::map<uint64_t, Tick> told;
  for (auto& [t, a] : r.got) EXPECT_TRUE(told.emplace(a, t).second) << "told twice: " << a;
  EXPECT_EQ(told, expected);
}

TEST(SimNetwork, ReceivePostedFirstIsToldWhenTheMessageArrives) {
  NetworkConfig net = network("Ring", 8);
  EventQueue q("w");
  Recorder r(q);
  auto n = make_network(Backend::CongestionUnaware, q, r, net);
  n->recv(3, 0, 1024, 7, Handler{1, 3, 20});
  n->send(0, 3, 1024, 7, Handler{1, 0, 10});
  run_all(q);
  Tick arrival = 3 * 100 + serial(1024);  // three hops the short way round the ring of 8
  EXPECT_EQ(r.got, (std::vector<std::pair<Tick, uint64_t>>{{arrival, 10}, {arrival, 20}}));
  EXPECT_EQ(n->messages_delivered(), 1u);
  EXPECT_TRUE(n->closed_forms());
  Flows f;
  f.bytes = 1024, f.src = {0, 0}, f.dst = {3, 5};
  ASSERT_TRUE(n->open_flows(f));
  n->ready_flows(f);
  EXPECT_EQ(f.delay, (std::vector<Tick>{arrival, arrival})) << "the other way round is as short";
  EXPECT_TRUE(f.alike);
  EXPECT_EQ(f.carry(1, 1000), 1000 + arrival);
}

TEST(SimNetwork, ReceivePostedAfterArrivalIsToldAtOnce) {
  NetworkConfig net = network("Switch", 4);
  EventQueue q("w");
  Recorder r(q);
  At at(q);
  auto n = make_network(Backend::CongestionUnaware, q, r, net);
  n->send(0, 2, 64, 1, Handler{1, 0, 10});
  at.at(5000, [&] { n->recv(2, 0, 64, 1, Handler{1, 2, 20}); });
  run_all(q);
  Tick arrival = 2 * 100 + serial(64);  // NPU -> switch -> NPU
  EXPECT_EQ(r.got, (std::vector<std::pair<Tick, uint64_t>>{{arrival, 10}, {5000, 20}}));
}

TEST(SimNetwork, MatchingIsByTagSizeAndOrder) {
  NetworkConfig net = network("FullyConnected", 4);
  EventQueue q("w");
  Recorder r(q);
  auto n = make_network(Backend::CongestionUnaware, q, r, net);
  n->recv(1, 0, 64, 2, Handler{1, 1, 99});  // another tag: never matched
  n->recv(1, 0, 32, 1, Handler{1, 1, 98});  // another size: never matched
  n->recv(1, 0, 64, 1, Handler{1, 1, 21});  // first of the (tag 1, 64 bytes) stream
  n->recv(1, 0, 64, 1, Handler{1, 1, 22});
  n->send(0, 1, 64, 1, Handler{1, 0, 11});
  n->send(0, 1, 64, 1, Handler{1, 0, 12});
  run_all(q);
  std::vector<uint64_t> args;
  for (auto& g : r.got) args.push_back(g.second);
  EXPECT_EQ(args, (std::vector<uint64_t>{11, 21, 12, 22}));
}

TEST(SimNetwork, CongestionAwareLinksCarryOneMessageAtATime) {
  NetworkConfig net = network("Ring", 4);
  for (Backend b : {Backend::CongestionUnaware, Backend::CongestionAware}) {
    EventQueue q("w");
    Recorder r(q);
    auto n = make_network(b, q, r, net);
    n->send(0, 1, 1024, 1, Handler{1, 0, 1});
    n->send(0, 1, 1024, 2, Handler{1, 0, 2});
    run_all(q);
    ASSERT_EQ(r.got.size(), 2u);
    Tick one = 100 + serial(1024);
    EXPECT_EQ(r.got[0].first, one);
    // aware: the second waits for the link until the first is serialised
    EXPECT_EQ(r.got[1].first, b == Backend::CongestionAware ? serial(1024) + one : one);
    // The same two messages as one closed-form flow (on links nothing used yet): the same times.
    auto fresh = make_network(b, q, r, net);
    Flows f;
    f.bytes = 1024, f.src = {0}, f.dst = {1};
    ASSERT_TRUE(fresh->open_flows(f));
    fresh->ready_flows(f);
    EXPECT_EQ(f.carry(0, 0), r.got[0].first);
    EXPECT_EQ(f.carry(0, 0), r.got[1].first);
  }
}

TEST(SimNetwork, CongestionAwareFlowsNeverShareALink) {
  EventQueue q("w");
  Recorder r(q);
  const NetworkConfig ring4 = network("Ring", 4), switch4 = network("Switch", 4);
  auto n = make_network(Backend::CongestionAware, q, r, ring4);
  Flows ring;  // neighbours: one link each
  ring.bytes = 1024, ring.src = {0, 1, 2, 3}, ring.dst = {1, 2, 3, 0};
  EXPECT_TRUE(n->open_flows(ring));
  n->ready_flows(ring);
  EXPECT_TRUE(ring.alike);
  Flows two;  // 0 -> 2 goes 0 -> 1 -> 2 and shares 1 -> 2 with 1 -> 2
  two.bytes = 1024, two.src = {0, 1}, two.dst = {2, 2};
  EXPECT_FALSE(n->open_flows(two));
  auto sw = make_network(Backend::CongestionAware, q, r, switch4);
  Flows up;  // two flows from NPU 0 share its link to the switch
  up.bytes = 64, up.src = {0, 0}, up.dst = {1, 2};
  EXPECT_FALSE(sw->open_flows(up));
}

// A closed-form flow 0 -> 1 of two messages reaching the link at 5000 and 5010 holds it until
// 5000 + 2 serial(1024). A message simulated over it before then is carried as if the flow's
// had been simulated too, or, where their order cannot be known without them, the run is redone.
TEST(SimNetwork, SimulatedTrafficOnALinkAClosedFormHoldsIsOrderedOrCaught) {
  const NetworkConfig net = network("Ring", 4);
  const Tick s = serial(1024), held_until = 5000 + 2 * s;
  struct Case {
    Tick at;
    Tick arrival;  // 0: the run must be redone
  };
  for (Case c : {Case{0, 0 + 100 + s},                       // through before the flow's first
                 Case{5005, 0},                              // between the flow's two messages
                 Case{5020, held_until + 100 + s},           // after its last: waits for the link
                 Case{held_until, held_until + 100 + s}}) {  // the link is free again
    EventQueue q("w");
    Recorder r(q);
    At at(q);
    auto n = make_network(Backend::CongestionAware, q, r, net);
    Flows f;
    f.bytes = 1024, f.src = {0}, f.dst = {1};
    ASSERT_TRUE(n->open_flows(f));
    n->ready_flows(f);
    EXPECT_EQ(f.carry(0, 5000), 5000 + 100 + s);
    EXPECT_EQ(f.carry(0, 5010), 5000 + s + 100 + s) << "queued behind the first";
    n->close_flows(f, 2, false);
    at.at(c.at, [&] { n->send(0, 1, 1024, 9, Handler{1, 0, 1}); });
    if (c.arrival == 0) {
      EXPECT_THROW(run_all(q), ClosedFormContended) << c.at;
      continue;
    }
    run_all(q);
    ASSERT_EQ(r.got.size(), 1u) << c.at;
    EXPECT_EQ(r.got[0].first, c.arrival) << c.at;
  }
  {  // a closed form over a link a simulated message reached at the flow's first arrival or later
    EventQueue q("w");
    Recorder r(q);
    auto n = make_network(Backend::CongestionAware, q, r, net);
    n->send(0, 1, 1024, 9, Handler{1, 0, 1});
    run_all(q);
    Flows f;
    f.bytes = 1024, f.src = {0}, f.dst = {1};
    ASSERT_TRUE(n->open_flows(f));
    n->ready_flows(f);
    f.carry(0, 0);
    EXPECT_THROW(n->close_flows(f, 1, false), ClosedFormContended);
  }
  {  // one that reached it before: the flow's messages queue behind it
    EventQueue q("w");
    Recorder r(q);
    auto n = make_network(Backend::CongestionAware, q, r, net);
    n->send(0, 1, 1024, 9, Handler{1, 0, 1});
    Flows f;
    f.bytes = 1024, f.src = {0}, f.dst = {1};
    ASSERT_TRUE(n->open_flows(f));
    n->ready_flows(f);
    EXPECT_EQ(f.carry(0, 100), s + 100 + s);
    n->close_flows(f, 1, false);
    run_all(q);
    EXPECT_EQ(r.got.size(), 1u);
  }
}

// Rotations of coordinate digits: a switch or fully-connected dimension offers every digit of
// every mixed-radix reading, a ring only its whole coordinate; the group they generate moves each
// NPU to its orbit's lowest NPU, and its elements enumerate each orbit once.
TEST(SimSymmetry, RotationsOfDigitsAndTheirOrbits) {
  const NetworkConfig net = parse_network(
      "topology: [ Switch, Ring, FullyConnected ]\nnpus_count: [ 8, 4, 2 ]\nbandwidth: [ 1, 1, 1 ]\nlatency: [ 1, 1, 1 "
      "]\n",
      "n.yml");
  std::vector<Rotation> all = Symmetry::of_network(net);
  auto offered = [&](Rotation r) { return std::find(all.begin(), all.end(), r) != all.end(); };
  // Switch 8: (stride, radix) with stride * radix dividing 8.
  for (auto [stride, radix] :
       std::vector<std::pair<uint32_t, uint32_t>>{{1, 2}, {1, 4}, {1, 8}, {2, 2}, {2, 4}, {4, 2}})
    EXPECT_TRUE(offered({0, stride, radix})) << stride << " " << radix;
  EXPECT_FALSE(offered({0, 1, 3}));
  EXPECT_TRUE(offered({1, 1, 4}));
  EXPECT_FALSE(offered({1, 1, 2}));  // half a ring's coordinate would not keep its neighbours
  EXPECT_TRUE(offered({2, 1, 2}));
  EXPECT_EQ(all.size(), 8u);

  // dimension 0's low two bits (radix 4) and the ring: 16 elements, 4 orbits of 16 NPUs each.
  const Symmetry sym(net, {{0, 1, 4}, {1, 1, 4}});
  EXPECT_EQ(sym.order(), 16u);
  std::map<uint32_t, std::set<uint32_t>> orbits;
  for (uint32_t n = 0; n < 64; ++n) {
    const uint32_t c = sym.canonical(n);
    EXPECT_EQ(c % 4, 0u) << n;             // digit 0 of dimension 0's low bits
    EXPECT_EQ((c / 8) % 4, 0u) << n;       // ring coordinate 0
    EXPECT_EQ(c % 8 / 4, n % 8 / 4) << n;  // dimension 0's high bit kept
    EXPECT_EQ(c / 32, n / 32) << n;        // dimension 2 kept
    EXPECT_EQ(sym.apply(sym.element_taking(n), n), c) << n;
    EXPECT_EQ(sym.move_as(n, n), c) << n;
    orbits[c].insert(n);
  }
  ASSERT_EQ(orbits.size(), 4u);
  for (const auto& [c, members] : orbits) {
    EXPECT_EQ(members.size(), 16u);
    std::set<uint32_t> images;
    for (uint32_t e = 0; e < sym.order(); ++e) images.insert(sym.apply(e, c));
    EXPECT_EQ(images, members);
  }
  // move_as applies to any NPU the element that takes `by` to its orbit's lowest: 13 is
  // (5, 1, 0), digits (1, 1); moved as 13, NPU 6 = (6, 0, 0) goes to (5, 3, 0) = 29.
  EXPECT_EQ(sym.move_as(6, 13), 29u);
}

TEST(SimNetwork, EveryListedBackendIsBuilt) {
  NetworkConfig net = network("Ring", 4);
  std::vector<std::string> names;
  for (const BackendInfo& b : network_backends()) {
    EventQueue q("w");
    Recorder r(q);
    EXPECT_NE(make_network(b.backend, q, r, net), nullptr) << b.spelling;
    names.push_back(b.spelling);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"unaware", "aware"}));
  EventQueue q("w");
  Recorder r(q);
  EXPECT_THROW(make_network(Backend(7), q, r, net), Error);
}

TEST(SimCollectives, EveryConfiguredAlgorithmHasAnImplementationAndASpelling) {
  ASSERT_EQ(collective_algorithms().size(), 4u);
  for (const AlgorithmInfo& a : collective_algorithms()) {
    EXPECT_NE(make_algorithm(a.kind, 8, 1), nullptr) << a.spelling;
    // the config reader and writer spell it as the list says, with its variants
    std::vector<std::string> names = {a.spelling};
    if (a.windowed) names.push_back(std::string(a.spelling) + "4");
    if (a.flat) names.push_back(algorithm_name({a.kind, true, -1}));
    for (const std::string& name : names) {
      SystemConfig s = parse_system(
          R"({"preferred-dataset-splits": 1, "all-reduce-implementation": [")" + name + R"("]})", "s.json");
      ASSERT_EQ(s.algorithms[0].size(), 1u);
      EXPECT_EQ(s.algorithms[0][0].kind, a.kind) << name;
      EXPECT_EQ(algorithm_name(s.algorithms[0][0]), name);
    }
  }
  EXPECT_EQ(algorithm_name({Algorithm::Direct, true, 4}), "oneDirect4");
  try {
    parse_system(R"({"all-reduce-implementation": ["oneDoubleBinaryTree"]})", "s.json");
    FAIL() << "a tree over all NPUs is not an ASTRA-sim algorithm";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(ring, direct[N], halvingDoubling, doubleBinaryTree, oneRing, "
                                         "oneDirect[N], oneHalvingDoubling)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NE(make_custom_algorithm(), nullptr);
}

}  // namespace
