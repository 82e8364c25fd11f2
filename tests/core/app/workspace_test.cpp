// The web app's model layer, tested natively: share links, config writers, the timeline model,
// graph queries and the workspace that recognises, pairs and converts dropped files.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "chakra/analysis/validate.h"
#include "chakra/app/share_link.h"
#include "chakra/app/sim_job.h"
#include "chakra/app/sim_presets.h"
#include "chakra/app/workspace.h"
#include "chakra/sim/simulate.h"
#include "chakra/support/error.h"
#include "chakra/analysis/critical_path.h"
#include "chakra/analysis/gpu_analysis.h"
#include "chakra/trace/graph.h"
#include "chakra/viz/timeline_model.h"
#include "chakra/viz/visualize.h"
#include "test_support.h"

using namespace chakra;
using testing_support::as_bytes;
using testing_support::read_raw;
using testing_support::shared;

namespace fs = std::filesystem;

TEST(ShareLink, RoundTripsAnyValueAndIsCanonical) {
  ShareState s{{"view", "timeline"}, {"net.bw", "450,50"}, {"name", "a b&c=d%e/#é"}, {"empty", ""}};
  std::string hash = encode_share_state(s);
  EXPECT_EQ(hash.find_first_of(" &=#", hash.find("name=") + 5), hash.find("&", hash.find("name=")));
  EXPECT_EQ(decode_share_state("#" + hash), s);
  EXPECT_EQ(encode_share_state(decode_share_state(hash)), hash);
  EXPECT_TRUE(decode_share_state("").empty());
  EXPECT_TRUE(decode_share_state("#").empty());
  EXPECT_EQ(decode_share_state("a=1&&b=2&").size(), 2u);
  EXPECT_EQ(decode_share_state("a=x+y").at("a"), "x y");
}

TEST(ShareLink, RejectsHostileHashesWithReasons) {
  auto error_of = [](const std::string& h) {
    try {
      decode_share_state(h);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error_of("a=1&a=2"), "share link: key 'a' appears twice");
  EXPECT_EQ(error_of("a=%4"), "share link: bad %-escape in the value of 'a'");
  EXPECT_EQ(error_of("a=%zz"), "share link: bad %-escape in the value of 'a'");
  EXPECT_NE(error_of("A<script>=1").find("characters other than"), std::string::npos);
  EXPECT_NE(error_of("=1").find("1 to 64 characters"), std::string::npos);
  EXPECT_NE(error_of(std::string(20000, 'a')).find("over the limit"), std::string::npos);
  std::string many;
  for (int i = 0; i < 300; ++i) many += "k" + std::to_string(i) + "=1&";
  EXPECT_NE(error_of(many).find("more than 256 keys"), std::string::npos);
  // Random bytes never crash: they decode or give a share-link error.
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string h(rng() % 64, '\0');
    for (char& c : h) c = static_cast<char>(rng() % 256);
    std::string e = error_of(h);
    EXPECT_TRUE(e == "accepted" || e.rfind("share link: ", 0) == 0) << e;
  }
}

// Links are written compressed (URL-safe, a fraction of the plain text) and read back the same;
// damaged, oversized and foreign compressed links are refused with a reason.
TEST(ShareLink, CompactLinksRoundTripAndRefuseDamage) {
  ShareState s;
  for (int d = 0; d < 3; ++d) s["sim.dim" + std::to_string(d)] = "Ring,4,50,1000";
  for (const char* k : {"sim.ar", "sim.ag", "sim.rs", "sim.a2a"}) s[k] = "ring,ring,ring";
  s["v"] = "timeline";
  s["t.0"] = "-27062171.4";
  s["t.1"] = "1109548986.4";
  const std::string plain = encode_share_state(s), link = encode_share_link(s);
  EXPECT_EQ(link.rfind("z=", 0), 0u);
  EXPECT_EQ(link.find_first_not_of("z=ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
            std::string::npos);
  EXPECT_LT(link.size(), plain.size());
  EXPECT_EQ(decode_share_state("#" + link), s);
  EXPECT_EQ(decode_share_state(plain), s);  // plain links still open
  auto error_of = [](const std::string& h, const ShareLimits& limits = {}) {
    try {
      decode_share_state(h, limits);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error_of(link.substr(0, link.size() - 6)),
            "share link: the compressed link is damaged (cut short or altered)");
  EXPECT_EQ(error_of("z=ab*c"), "share link: the compressed link has a character outside URL-safe base64");
  ShareLimits small;
  small.max_chars = 60;
  ShareState big{{"k", std::string(500, 'x')}};
  const std::string bomb = encode_share_link(big);  // short, but inflates past the limit
  ASSERT_LT(bomb.size(), small.max_chars);
  EXPECT_EQ(error_of(bomb, small), "share link: the compressed link inflates beyond 60 characters");
  // Random "z=" links never crash: they decode or give a share-link error.
  std::mt19937 rng(11);
  for (int round = 0; round < 2000; ++round) {
    std::string h = "z=" + link.substr(2);
    h[2 + rng() % (h.size() - 2)] = "AZaz09-_"[rng() % 8];
    const std::string e = error_of(h);
    EXPECT_TRUE(e == "accepted" || e.rfind("share link: ", 0) == 0) << e;
  }
}

// A file's fingerprint follows its content (size, head and tail), not its name.
TEST(ShareLink, FileFingerprintFollowsContent) {
  std::vector<uint8_t> a(300000, 7), b = a;
  EXPECT_EQ(file_fingerprint(a), file_fingerprint(b));
  b[10] = 8;  // the head
  EXPECT_NE(file_fingerprint(a), file_fingerprint(b));
  b = a;
  b[299990] = 8;  // the tail
  EXPECT_NE(file_fingerprint(a), file_fingerprint(b));
  b = a;
  b.push_back(7);  // the size
  EXPECT_NE(file_fingerprint(a), file_fingerprint(b));
  EXPECT_NE(file_fingerprint({}), 0u);
}

TEST(ShareLink, TypedReadsCheckRanges) {
  ShareState s = decode_share_state("n=12&x=1.5&bad=1e999&neg=-3&word=ring");
  EXPECT_EQ(share_int(s, "n", 1, 100, 0), 12);
  EXPECT_EQ(share_int(s, "missing", 1, 100, 7), 7);
  EXPECT_THROW(share_int(s, "n", 1, 10, 0), Error);
  EXPECT_THROW(share_int(s, "x", 0, 10, 0), Error);
  EXPECT_DOUBLE_EQ(share_number(s, "x", 0, 10, 0), 1.5);
  EXPECT_THROW(share_number(s, "bad", 0, 1e300, 0), Error);
  EXPECT_THROW(share_number(s, "neg", 0, 10, 0), Error);
  EXPECT_EQ(share_choice(s, "word", {"ring", "direct"}, "direct"), "ring");
  EXPECT_THROW(share_choice(s, "word", {"direct"}, "direct"), Error);
  EXPECT_EQ(format_number(0.1), "0.1");
  EXPECT_EQ(format_number(936.25), "936.25");
  EXPECT_EQ(format_number(10), "10");
  EXPECT_EQ(format_number(1500), "1500");
  EXPECT_EQ(format_number(-3), "-3");
  EXPECT_EQ(std::stod(format_number(1.0 / 3)), 1.0 / 3);
}

// Folded ranks as ranges, pinned tracks as dotted tuples: written compactly, read strictly.
TEST(ShareLink, IndexRangesAndTuples) {
  const std::vector<uint32_t> folded = {0, 1, 2, 3, 7, 9, 10};
  EXPECT_EQ(chakra::format_index_ranges(folded), "0-3,7,9-10");
  ShareState s = {{"f", chakra::format_index_ranges(folded)}, {"p", "3.0.1,5.1.0"}};
  EXPECT_EQ(chakra::share_index_ranges(s, "f", 100, 100), folded);
  EXPECT_TRUE(chakra::share_index_ranges(s, "missing", 100, 100).empty());
  const auto pins = chakra::share_tuples(s, "p", 3, 100, 10);
  ASSERT_EQ(pins.size(), 2u);
  EXPECT_EQ(pins[1], (std::vector<uint32_t>{5, 1, 0}));
  for (const char* bad : {"", "3-1", "1,1", "2,1", "+1", "1 ", "-1", "0-99999999", "a", "200"}) {
    ShareState b = {{"f", bad}};
    EXPECT_THROW(chakra::share_index_ranges(b, "f", 100, 1000), Error) << bad;
  }
  EXPECT_THROW(chakra::share_index_ranges(s, "f", 100, 5), Error);  // 7 values, 5 allowed
  for (const char* bad : {"1.2", "1.2.3.4", "1..2", "1.2.x", "1.2.3,"}) {
    ShareState b = {{"p", bad}};
    EXPECT_THROW(chakra::share_tuples(b, "p", 3, 100, 10), Error) << bad;
  }
  EXPECT_THROW(chakra::share_tuples(s, "p", 3, 100, 1), Error);
}

TEST(SimConfigWriters, EveryReferenceConfigReadsBackEqual) {
  int networks = 0, systems = 0;
  for (const std::string& path : testing_support::find_files(shared("reference/astra-sim/inputs/net"), {".yml"})) {
    astra::NetworkConfig a = astra::load_network(path);
    astra::NetworkConfig b = astra::parse_network(astra::format_network(a), "written");
    EXPECT_EQ(a.topology, b.topology) << path;
    EXPECT_EQ(a.npus, b.npus) << path;
    EXPECT_EQ(a.bandwidth, b.bandwidth) << path;
    EXPECT_EQ(a.latency, b.latency) << path;
    ++networks;
  }
  for (const std::string& path : testing_support::find_files(shared("reference/astra-sim/inputs/sys"), {".json"})) {
    astra::SystemConfig a;
    try {
      a = astra::load_system(path);
    } catch (const Error&) {
      continue;  // configs this simulator rejects are covered by the simulator tests
    }
    std::string text = astra::format_system(a);
    astra::SystemConfig b = astra::parse_system(text, "written");
    EXPECT_EQ(text, astra::format_system(b)) << path;
    EXPECT_EQ(a.preferred_dataset_splits, b.preferred_dataset_splits);
    EXPECT_EQ(a.endpoint_delay, b.endpoint_delay);
    for (int t = 0; t < astra::kCollectiveTypes; ++t) {
      ASSERT_EQ(a.algorithms[t].size(), b.algorithms[t].size()) << path;
      for (size_t d = 0; d < a.algorithms[t].size(); ++d) {
        EXPECT_EQ(astra::algorithm_name(a.algorithms[t][d]), astra::algorithm_name(b.algorithms[t][d]));
        EXPECT_EQ(a.algorithms[t][d].kind, b.algorithms[t][d].kind);
        EXPECT_EQ(a.algorithms[t][d].flat, b.algorithms[t][d].flat);
        EXPECT_EQ(a.algorithms[t][d].window, b.algorithms[t][d].window);
      }
    }
    ++systems;
  }
  EXPECT_GE(networks, 8);
  EXPECT_GE(systems, 8);
  astra::AlgorithmChoice flat{astra::Algorithm::HalvingDoubling, true, -1};
  EXPECT_EQ(astra::algorithm_name(flat), "oneHalvingDoubling");
  EXPECT_EQ(astra::algorithm_name({astra::Algorithm::Direct, false, 4}), "direct4");
}

namespace {
TimelineTrack make_track(const std::vector<std::pair<uint64_t, uint64_t>>& events) {
  std::vector<TimelineEvent> ev;
  for (uint32_t i = 0; i < events.size(); ++i) ev.push_back({0, 0, events[i].first, events[i].second, i, 0});
  TimelineModel m = build_timeline(ev, "ns");
  EXPECT_EQ(m.tracks.size(), 1u);
  return m.tracks[0];
}
}  // namespace

TEST(TimelineModel, NestedAndOverlappingEventsGetLowestFreeLanes) {
  // rank 0: [0,100) holds [10,20) and [30,60) which holds [40,50); [50,150) overlaps the first.
  std::vector<TimelineEvent> ev = {{0, 0, 0, 100, 0, 1}, {0, 0, 10, 20, 1, 1},  {0, 0, 30, 60, 2, 1},
                                   {0, 0, 40, 50, 3, 1}, {0, 0, 60, 150, 4, 1}, {1, 0, 5, 6, 0, 2},
                                   {0, 1, 0, 10, 9, 3}};
  TimelineModel m = build_timeline(ev, "us");
  ASSERT_EQ(m.tracks.size(), 5u);  // rank 0 class 0: 3 lanes; rank 0 class 1; rank 1
  EXPECT_EQ(m.begin, 0u);
  EXPECT_EQ(m.end, 150u);
  auto where = [&](uint32_t group, uint32_t item) {
    auto r = m.find(group, item);
    EXPECT_TRUE(r.has_value());
    return std::make_pair(m.tracks[r->track].lane, m.tracks[r->track].start[r->index]);
  };
  EXPECT_EQ(where(0, 0), std::make_pair(0u, uint64_t{0}));
  EXPECT_EQ(where(0, 1), std::make_pair(1u, uint64_t{10}));
  EXPECT_EQ(where(0, 2), std::make_pair(1u, uint64_t{30}));
  EXPECT_EQ(where(0, 3), std::make_pair(2u, uint64_t{40}));
  EXPECT_EQ(where(0, 4), std::make_pair(1u, uint64_t{60}));
  EXPECT_FALSE(m.find(2, 0).has_value());
  for (const TimelineTrack& t : m.tracks)
    for (size_t i = 1; i < t.size(); ++i) EXPECT_LE(t.end[i - 1], t.start[i]) << "lanes must be disjoint";
}

TEST(TimelineModel, VisibleRectsMergeSubPixelRunsAndKeepWideEvents) {
  // 1000 events of 1 ns every 2 ns, then one long event, then a gap and one more.
  std::vector<std::pair<uint64_t, uint64_t>> ev;
  for (uint64_t i = 0; i < 1000; ++i) ev.push_back({2 * i, 2 * i + 1});
  ev.push_back({2000, 3000});
  ev.push_back({5000, 5001});
  TimelineTrack t = make_track(ev);
  std::vector<TimelineRect> rects;
  visible_rects(t, 0, 6000, 0.1, rects);  // 10 ns per pixel
  ASSERT_EQ(rects.size(), 3u);
  EXPECT_EQ(rects[0].count, 1000u);
  EXPECT_NEAR(rects[0].x1, 199.9, 1e-9);
  EXPECT_EQ(rects[1].first, 1000u);
  EXPECT_EQ(rects[1].count, 1u);
  EXPECT_NEAR(rects[1].x0, 200, 1e-9);
  EXPECT_NEAR(rects[1].x1, 300, 1e-9);
  EXPECT_EQ(rects[2].first, 1001u);
  // Zoomed in, each event is its own rect; only the visible ones are returned.
  rects.clear();
  visible_rects(t, 100, 120, 10.0, rects);
  ASSERT_EQ(rects.size(), 10u);
  EXPECT_EQ(rects[0].first, 50u);
  EXPECT_NEAR(rects[0].x0, 0, 1e-9);
  // Every event is accounted for exactly once at any zoom.
  for (double scale : {0.001, 0.05, 0.3, 0.7, 1.0, 3.0}) {
    rects.clear();
    visible_rects(t, 0, 6000, scale, rects);
    uint64_t covered = 0;
    for (size_t i = 0; i < rects.size(); ++i) {
      covered += rects[i].count;
      if (i) {
        EXPECT_EQ(rects[i].first, rects[i - 1].first + rects[i - 1].count);
      }
    }
    EXPECT_EQ(covered, t.size()) << scale;
  }
}

TEST(TimelineModel, RectCountIsBoundedByPixelsNotEvents) {
  std::vector<std::pair<uint64_t, uint64_t>> ev;
  std::mt19937_64 rng(3);
  uint64_t at = 0;
  for (int i = 0; i < 1000000; ++i) {
    at += rng() % 50;
    uint64_t dur = 1 + rng() % 40;
    ev.push_back({at, at + dur});
    at += dur;
  }
  TimelineTrack t = make_track(ev);
  std::vector<TimelineRect> rects;
  visible_rects(t, 0, static_cast<double>(at), 2000.0 / static_cast<double>(at), rects);
  EXPECT_LE(rects.size(), 2001u);
  uint64_t covered = 0;
  for (const auto& r : rects) covered += r.count;
  EXPECT_EQ(covered, 1000000u);
}

// Measured traces start at epoch timestamps: ticks count from the timeline's start, so labels
// (tick - start) are round multiples of the step, negative left of the start.
TEST(TimelineModel, AxisTicksCountFromTheStartNotFromZero) {
  const double start = 1700000000001500.5, step = 10000;  // µs since the epoch, a 10 ms step
  const std::vector<double> ticks = chakra::axis_ticks(start, start - 25000, start + 41000, step);
  std::vector<double> labels;
  for (double t : ticks) labels.push_back(t - start);
  EXPECT_EQ(labels, (std::vector<double>{-20000, -10000, 0, 10000, 20000, 30000, 40000}));
  EXPECT_TRUE(chakra::axis_ticks(start, start, start + 5, 0).empty());
  EXPECT_TRUE(chakra::axis_ticks(start, start + 5, start, step).empty());
  EXPECT_EQ(chakra::axis_ticks(0, 0, 1e9, 1).size(), 10000u);  // bounded
  // Round steps: the smallest 1, 2 or 5 × 10^k at least as large as asked.
  EXPECT_DOUBLE_EQ(chakra::round_step(16100), 20000);
  EXPECT_DOUBLE_EQ(chakra::round_step(4.75), 5);
  EXPECT_DOUBLE_EQ(chakra::round_step(0.5), 0.5);
  EXPECT_DOUBLE_EQ(chakra::round_step(6), 10);
  EXPECT_DOUBLE_EQ(chakra::round_step(0), 1);
  EXPECT_DOUBLE_EQ(chakra::round_step(NAN), 1);
}

// Panning and zooming stay on the data: at most the whole run with a 2.5% margin each side.
TEST(TimelineModel, WindowStaysOnTheData) {
  using chakra::clamp_window;
  EXPECT_EQ(clamp_window(100, 200, 0, 1000), std::make_pair(100.0, 200.0));     // inside: kept
  EXPECT_EQ(clamp_window(-500, -400, 0, 1000), std::make_pair(-25.0, 75.0));    // panned left of it
  EXPECT_EQ(clamp_window(5000, 5100, 0, 1000), std::make_pair(925.0, 1025.0));  // right of it
  EXPECT_EQ(clamp_window(-1e6, 1e6, 0, 1000), std::make_pair(-25.0, 1025.0));   // zoomed out past it
  EXPECT_EQ(clamp_window(10, 10, 0, 1000, 0.5), std::make_pair(10.0, 10.5));    // narrower than allowed
  EXPECT_EQ(clamp_window(NAN, 1, 0, 1000), std::make_pair(-25.0, 1025.0));
  // Focus: the event with 10% room each side; an instant gets 1e-4 of the run.
  EXPECT_EQ(chakra::focus_window(100, 200, 1000), std::make_pair(90.0, 210.0));
  const auto instant = chakra::focus_window(500, 500, 1e6);
  EXPECT_DOUBLE_EQ(instant.second - instant.first, 120.0);
}

// The overview strip's density: busy time per bin, events split across the bins they cover.
TEST(TimelineModel, BusyPerBinAndFindByName) {
  chakra::TimelineModel m;
  m.begin = 0;
  m.end = 100;
  chakra::TimelineTrack a, b;
  a.start = {0, 30};
  a.end = {10, 75};  // 0-10 in bin 0; 30-75 covers bins 1 (30-50, 20) and 2 (50-75, 25)
  a.item = {0, 1};
  a.category = {0, 0};
  b.start = {5};
  b.end = {100};  // 45 in bin 0, 50 in bin 1... as 5-50 and 50-100
  b.item = {2};
  b.category = {0};
  b.group = 1;
  m.tracks = {a, b};
  const std::vector<double> busy = chakra::busy_per_bin(m, 2);  // bins of 50
  EXPECT_DOUBLE_EQ(busy[0], 10 + 20 + 45);
  EXPECT_DOUBLE_EQ(busy[1], 25 + 50);
  const std::vector<double> fine = chakra::busy_per_bin(m, 4);  // bins of 25, a full bin in the middle
  EXPECT_DOUBLE_EQ(fine[0] + fine[1] + fine[2] + fine[3], 10 + 45 + 95);
  EXPECT_DOUBLE_EQ(fine[2], 25 + 25);
  // Names, case-insensitive, in start order; no query finds nothing.
  const char* names[] = {"aten::mm", "ncclKernel_AllReduce", "nccl:all_reduce"};
  auto name_of = [&](uint32_t, uint32_t item) { return std::string_view(names[item]); };
  const auto found = chakra::find_events(m, "ALL", name_of);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].track, 1u);  // starts at 5
  EXPECT_EQ(found[1].index, 1u);  // starts at 30
  EXPECT_TRUE(chakra::find_events(m, "", name_of).empty());
  EXPECT_EQ(chakra::find_events(m, "a", name_of, 1).size(), 1u);
}

// Rows: pinned tracks in their band, a collapsed group in one row holding all its tracks.
TEST(TimelineModel, RowsPinTracksAndFoldGroups) {
  chakra::TimelineModel m;
  const uint32_t keys[][3] = {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {1, 0, 0}, {1, 1, 0}, {3, 0, 0}};
  for (const auto& k : keys) {
    chakra::TimelineTrack t;
    t.group = k[0], t.lane_class = k[1], t.lane = k[2];
    m.tracks.push_back(t);
  }
  EXPECT_EQ(chakra::find_track(m, {1, 1, 0}), 4u);
  EXPECT_EQ(chakra::find_track(m, {2, 0, 0}), std::nullopt);
  const chakra::TimelineTrackKey pinned[] = {{3, 0, 0}, {7, 0, 0}, {0, 1, 0}};  // rank 7 is not here
  auto open = chakra::timeline_rows(m, pinned, [](uint32_t) { return false; });
  ASSERT_EQ(open.pinned.size(), 2u);
  EXPECT_EQ(open.pinned[0].first_track, 5u);
  EXPECT_EQ(open.pinned[1].first_track, 2u);
  ASSERT_EQ(open.rows.size(), 6u);
  EXPECT_TRUE(open.rows[0].group_start && !open.rows[1].group_start && open.rows[3].group_start);
  EXPECT_EQ(open.row_of_track, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));
  auto folded = chakra::timeline_rows(m, {}, [](uint32_t g) { return g == 0; });
  ASSERT_EQ(folded.rows.size(), 4u);
  EXPECT_TRUE(folded.rows[0].collapsed);
  EXPECT_EQ(folded.rows[0].tracks, 3u);
  EXPECT_EQ(folded.row_of_track, (std::vector<uint32_t>{0, 0, 0, 1, 2, 3}));
  EXPECT_EQ(folded.tracks_of_rows(0, 1), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(folded.tracks_of_rows(3, 99), (std::vector<uint32_t>{5}));
}

TEST(TimelineModel, PickAndAreaStats) {
  TimelineTrack t = make_track({{0, 10}, {20, 30}, {40, 100}});
  EXPECT_EQ(pick_event(t, 25, 0), 1u);
  EXPECT_FALSE(pick_event(t, 15, 0).has_value());
  EXPECT_EQ(pick_event(t, 15, 5), 1u);
  std::vector<TimelineEvent> ev = {{0, 0, 0, 10, 0, 1}, {0, 0, 20, 30, 1, 2}, {1, 0, 5, 50, 2, 2}};
  TimelineModel m = build_timeline(ev, "ns");
  std::vector<uint32_t> both{0, 1};
  AreaStats s = area_stats(m, both, 5, 25);
  EXPECT_EQ(s.events, 3u);
  EXPECT_DOUBLE_EQ(s.busy, 5 + 5 + 20);
  EXPECT_EQ(s.by_category[1].first, 1u);
  EXPECT_DOUBLE_EQ(s.by_category[2].second, 25);
  EXPECT_EQ(s.refs.size(), 3u);
}

// Every way the index stores ids gives what a scan of the nodes gives: dense ids (a table),
// sparse ascending ids (searched in place), sparse ids in any order (sorted); duplicates once,
// ascending, the first node winning.
TEST(GraphQueries, IdIndexFindsWhatAScanFinds) {
  const std::vector<std::vector<uint64_t>> layouts = {
      {0, 1, 2, 3, 4, 5, 6, 7},                                // dense, ascending
      {7, 3, 5, 3, 1000, 2, 7, 7},                             // dense, shuffled, duplicates
      {5, 1u << 20, 3u << 20, uint64_t{1} << 40},              // sparse, ascending
      {uint64_t{1} << 40, 9, 1u << 30, 9, uint64_t{1} << 40},  // sparse, shuffled, duplicates
  };
  for (const std::vector<uint64_t>& ids : layouts) {
    Trace t;
    NodeDraft d;
    for (uint64_t id : ids) {
      d.clear();
      d.id = id;
      t.append(d);
    }
    const IdIndex index(t);
    std::vector<uint64_t> probes = ids;
    for (uint64_t extra : {uint64_t{0}, uint64_t{4}, uint64_t{8}, uint64_t{999}, uint64_t{1} << 39, ~uint64_t{0}})
      probes.push_back(extra);
    for (uint64_t id : probes) {
      auto first = std::find(ids.begin(), ids.end(), id);
      const std::optional<uint32_t> want =
          first == ids.end() ? std::nullopt : std::optional<uint32_t>(static_cast<uint32_t>(first - ids.begin()));
      EXPECT_EQ(index.find(id), want) << "id " << id << " of layout " << ids.front();
    }
    std::vector<uint64_t> duplicates;
    for (size_t i = 0; i < ids.size(); ++i)
      if (std::count(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(i), ids[i]) == 1)
        duplicates.push_back(ids[i]);
    std::sort(duplicates.begin(), duplicates.end());
    EXPECT_EQ(index.duplicate_ids(), duplicates) << "layout " << ids.front();
  }
}

TEST(GraphQueries, ReachableAndCriticalPath) {
  // 0 -> 1 -> 3, 0 -> 2 -> 3 (arrows: "is depended on by"); durations 5, 1, 10, 2.
  Trace t;
  NodeDraft d;
  uint64_t durations[] = {5, 1, 10, 2};
  std::vector<std::vector<uint64_t>> deps = {{}, {0}, {0}, {1, 2}};
  for (uint64_t i = 0; i < 4; ++i) {
    d.clear();
    d.id = i;
    d.type = 4;
    d.duration_micros = durations[i];
    d.data_deps = deps[i];
    t.append(d);
  }
  IdIndex index(t);
  DepGraph g = DepGraph::build(t, index, DepKind::Both);
  auto sorted = [](std::vector<uint32_t> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(reachable(g, 3)), (std::vector<uint32_t>{0, 1, 2}));
  DepGraph r = reverse(g);
  EXPECT_EQ(sorted(reachable(r, 0)), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(reachable(r, 0, 1).size(), 1u);
  CriticalPath cp = critical_path(t, g);
  EXPECT_EQ(cp.nodes, (std::vector<uint32_t>{0, 2, 3}));
  EXPECT_EQ(cp.duration_micros, 17u);
}

// A kernel's host op and a host op's kernels, from is_cpu_op and the dependencies both ways.
TEST(GraphQueries, LaunchPeers) {
  // 0 host op; 1 kernel (data and ctrl dep on 0); 2 host op after 0; 3 kernel of 2; 4 no is_cpu_op.
  Trace t;
  NodeDraft d;
  const std::vector<std::vector<uint64_t>> data = {{}, {0}, {0}, {2, 1}, {1}};
  for (uint64_t i = 0; i < 5; ++i) {
    d.clear();
    d.id = i;
    d.type = 4;
    d.data_deps = data[i];
    if (i == 1) d.ctrl_deps = {0};
    if (i < 4) d.attrs.add_bool(t.intern("is_cpu_op"), i == 0 || i == 2);
    t.append(d);
  }
  IdIndex index(t);
  DepGraph deps = DepGraph::build(t, index, DepKind::Both);
  DepGraph dependants = reverse(deps);
  EXPECT_EQ(launch_peers(t, deps, dependants, 0), (std::vector<uint32_t>{1}));  // once, though on both kinds
  EXPECT_EQ(launch_peers(t, deps, dependants, 1), (std::vector<uint32_t>{0}));
  EXPECT_EQ(launch_peers(t, deps, dependants, 2), (std::vector<uint32_t>{3}));
  EXPECT_EQ(launch_peers(t, deps, dependants, 3), (std::vector<uint32_t>{2}));  // not kernel 1
  EXPECT_TRUE(launch_peers(t, deps, dependants, 4).empty());
}

TEST(Workspace, RecognisesEveryKindOfInputInTheCorpus) {
  auto kind = [](const std::string& rel) {
    std::string path = shared(rel);
    return detect_input_kind(fs::path(path).filename().string(), as_bytes(read_raw(path)));
  };
  EXPECT_EQ(kind("data/chakra_et/ericding_pytorch_converted_2rank/chakra_trace.0.et"), InputKind::ChakraEt);
  EXPECT_EQ(kind("data/chakra_et/ericding_pytorch_converted_2rank/comm_group.json"), InputKind::CommGroupJson);
  EXPECT_EQ(kind("data/pairs/dlrm_8rank_v100/rank0/dlrm_eg_0.json"), InputKind::PytorchHostEt);
  EXPECT_EQ(kind("data/pairs/dlrm_8rank_v100/rank0/worker0_step_12.1694128201545.pt.trace.json"),
            InputKind::KinetoTrace);
  EXPECT_EQ(kind("data/pairs/param_linear_rtx2080ti_1rank/linear_kineto.json.gz"), InputKind::KinetoTrace);
  EXPECT_EQ(kind("data/pairs/param_linear_rtx2080ti_1rank/linear_et.json.gz"), InputKind::PytorchHostEt);
  EXPECT_EQ(kind("data/text_workloads/astra-sim-1.0__Resnet50_DataParallel.txt"), InputKind::TextWorkload);
  EXPECT_EQ(kind("reference/astra-sim/inputs/net/sw8_ring4.yml"), InputKind::NetworkYaml);
  EXPECT_EQ(kind("reference/astra-sim/inputs/sys/DGX_H100.json"), InputKind::SystemJson);
  for (const std::string& path : testing_support::all_shared_traces())
    EXPECT_EQ(detect_input_kind(fs::path(path).filename().string(), as_bytes(read_raw(path))), InputKind::ChakraEt)
        << path;
  EXPECT_EQ(detect_input_kind("notes.md", as_bytes(std::string("# hello\nworld\n"))), InputKind::Unknown);
  // Communicator groups are group ids → lists of ranks; other JSON is of no kind we read.
  EXPECT_EQ(detect_input_kind("g.json", as_bytes(std::string(R"({"1": [0, 1], "2": [2, 3]})"))),
            InputKind::CommGroupJson);
  EXPECT_EQ(detect_input_kind("x.json", as_bytes(std::string(R"({"hello": [1]})"))), InputKind::Unknown);
  EXPECT_EQ(detect_input_kind("x.json", as_bytes(std::string(R"({"1": ["a"]})"))), InputKind::Unknown);
}

// A file of no kind we read says what it looks like instead of a decoder's complaint.
TEST(Workspace, UnknownFilesSayWhatTheyLookLike) {
  const std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10", 20);
  EXPECT_EQ(detect_input_kind("shot.png", as_bytes(png)), InputKind::Unknown);
  Workspace ws;
  auto error = [&](const std::string& name, const std::string& bytes) {
    try {
      ws.add(as_bytes(bytes), name);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("shot.png", png).find("shot.png: not a trace this page reads: it looks like a PNG image"),
            std::string::npos);
  EXPECT_NE(error("x.json", R"({"hello": 1})").find("it looks like JSON of no kind chakrakit reads"),
            std::string::npos);
  EXPECT_NE(error("a.zip", std::string("PK\x03\x04rest", 8)).find("a ZIP archive"), std::string::npos);
  EXPECT_TRUE(ws.ranks().empty());
}

// What a file is, in words, for commands that refuse it: configs by their kind, Chakra JSON
// before the host ETs it resembles, binary data of no kind left open (it may be a damaged .et).
TEST(Workspace, DescribesWhatAFileIs) {
  auto describe = [](const std::string& name, const std::string& bytes) {
    return describe_input(name, as_bytes(bytes));
  };
  const std::string yaml = read_raw(shared("reference/astra-sim/inputs/net/sw8_ring4.yml"));
  EXPECT_EQ(describe("net.yml", yaml).what, "an ASTRA-sim network config (YAML)");
  const InputDescription chakra_json =
      describe("t.json", R"({"globalMetadata": {"attr": [{"name": "schema"}]}, "nodes": []})");
  EXPECT_EQ(chakra_json.kind,
            InputKind::ChakraJson);  // asked before the host ETs, which also hold "nodes" and "schema"
  EXPECT_EQ(chakra_json.evidence, "globalMetadata");
  EXPECT_EQ(describe("h.json", R"({"schema": "1.0.1", "nodes": [{"id": 1, "name": "aten::mm"}]})").kind,
            InputKind::PytorchHostEt);
  EXPECT_EQ(describe("notes.txt", "my notes\n").what, "text of no kind chakrakit reads");
  EXPECT_FALSE(describe("notes.txt", "my notes\n").opaque);
  EXPECT_EQ(describe("shot.png", std::string("\x89PNG\r\n\x1a\n\0\0", 10)).what, "a PNG image");
  EXPECT_FALSE(describe("shot.png", std::string("\x89PNG\r\n\x1a\n\0\0", 10)).opaque);
  EXPECT_TRUE(describe("trace.bin", std::string("\x01\x02\x03\x00\x05", 5)).opaque);
}

TEST(Workspace, RanksFromFileNames) {
  EXPECT_EQ(rank_from_file_name("chakra_trace.3.et"), 3u);
  EXPECT_EQ(rank_from_file_name("dir/x.12.et.gz"), 12u);
  EXPECT_EQ(rank_from_file_name("rank-5_trace.json"), 5u);
  EXPECT_EQ(rank_from_file_name("worker0_step_12.1694128201545.pt.trace.json"), 0u);
  EXPECT_EQ(rank_from_file_name("dlrm_eg_7.json"), 7u);
  EXPECT_EQ(rank_from_file_name("rank0_step5.json"), 0u);  // the CLI once said 5
  EXPECT_EQ(rank_from_file_name("linked.3.json.gz"), 3u);
  EXPECT_EQ(rank_from_file_name("/data/rank7"), 7u);                          // a rank's folder
  EXPECT_FALSE(rank_from_file_name("trace_1694128201545.json").has_value());  // a timestamp
  EXPECT_FALSE(rank_from_file_name("trace.et").has_value());
  // versions and dates are not ranks
  EXPECT_FALSE(rank_from_file_name("host_et_0.1.0.2-chakra.0.0.4.json.gz").has_value());
  EXPECT_FALSE(rank_from_file_name("resnet_et.2023-07.json.gz").has_value());
  EXPECT_FALSE(rank_from_file_name("1.0.2-chakra.0.0.4.et").has_value());
  EXPECT_EQ(rank_from_file_name("chakra.0.et"), 0u);
  EXPECT_EQ(rank_from_file_name("resnet_et.2023-07.rank3.json.gz"), 3u);
  EXPECT_FALSE(rank_from_file_name("resnet50.et").has_value());
}

TEST(Workspace, LoadsRanksInStepsAndSimulatesLikeTheFileBasedRun) {
  std::string dir = shared("data/chakra_et/astra-sim_AllReduce_1MB_8npus_2024-11");
  Workspace ws;
  for (int r = 7; r >= 0; --r) {  // any order
    std::string name = "AllReduce_1MB." + std::to_string(r) + ".et";
    std::string bytes = read_raw(dir + "/" + name);
    auto loading = ws.begin(as_bytes(bytes), name);
    int steps = 0;
    while (!loading->step(1)) ++steps;
    EXPECT_DOUBLE_EQ(loading->fraction(), 1);
    EXPECT_EQ(ws.finish(*loading), "rank " + std::to_string(r) + ": " + name + " (1 nodes)");
  }
  ASSERT_EQ(ws.ranks().size(), 8u);
  EXPECT_EQ(ws.ranks()[3]->rank, 3u);
  astra::NetworkConfig net = astra::load_network(shared("reference/astra-sim/inputs/net/ring_8.yml"));
  astra::SystemConfig sys = astra::load_system(shared("reference/astra-sim/inputs/sys/ring_s4_c1.json"));
  sim::SimResult in_memory = ws.simulate(net, sys);
  sim::SimInputs files;
  files.workload = dir + "/AllReduce_1MB";
  files.network = net;
  files.system = sys;
  sim::SimResult from_files = sim::simulate(files);
  ASSERT_EQ(in_memory.npus.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(in_memory.npus[i].finish, from_files.npus[i].finish);
  EXPECT_GT(in_memory.end(), 0u);
  // A network of another size is refused with the reason.
  astra::NetworkConfig big = astra::load_network(shared("reference/astra-sim/inputs/net/ring_16.yml"));
  try {
    ws.simulate(big, sys);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("16 NPUs but 8 ranks"), std::string::npos) << e.what();
  }
}

// A large .et handed over in slices, as the page reads it: decoded as its records arrive,
// holding a bounded amount, and giving what the whole file gives.
TEST(Workspace, StreamsAnEtInPiecesToTheSameTraceWhileHoldingLittle) {
  const std::string name = "resnet_rank1.et";
  // The ResNet rank (9 MB) with its nodes four times over: more than is ever held at once.
  const std::string one =
      testing_support::read_decompressed(shared("reference/chakra/outputs/trace_link/resnet_2gpu_rank1.et.gz"));
  size_t metadata = 0, shift = 0;  // record 0 (GlobalMetadata): its varint length prefix, then it
  for (uint64_t length = 0;; shift += 7) {
    const auto byte = static_cast<uint8_t>(one[metadata++]);
    length |= uint64_t{byte & 0x7Fu} << shift;
    if (!(byte & 0x80)) {
      metadata += static_cast<size_t>(length);
      break;
    }
  }
  std::string whole = one;
  for (int copy = 0; copy < 3; ++copy) whole += one.substr(metadata);
  ASSERT_GT(whole.size(), size_t{32} << 20);
  Workspace reference;
  reference.add(as_bytes(whole), name);
  const std::string expected = encode_et(reference.ranks().front()->trace);

  std::mt19937 rng(11);
  for (int round = 0; round < 3; ++round) {
    Workspace ws;
    auto loading = ws.begin_pieces(name, whole.size());
    size_t sent = 0;
    uint64_t most_held = 0;
    bool waited = false;  // a step found no whole record to decode
    bool done = false;
    while (!done) {
      const uint64_t wanted = loading->bytes_wanted();
      if (wanted > 0 && sent < whole.size()) {
        // Pieces of 1 byte to 3 MB: record prefixes and records split every way.
        const size_t n = std::min<size_t>(
            {static_cast<size_t>(wanted), whole.size() - sent, round == 0 ? 1 + rng() % 7 : 1 + rng() % (3 << 20)});
        loading->add_bytes(as_bytes(whole).subspan(sent, n));
        sent += n;
      }
      if (round > 0)  // (round 0 sends its rest unasked)
        most_held =
            std::max<uint64_t>(most_held, sent - static_cast<uint64_t>(loading->fraction() * double(whole.size())));
      const uint64_t before = loading->nodes();
      done = loading->step(round == 0 ? 1u << 20 : 500);
      waited |= !done && loading->nodes() == before && sent < whole.size();
      if (round == 0 && sent > (size_t{1} << 20)) {  // a byte at a time is slow: the rest at once
        loading->add_bytes(as_bytes(whole).subspan(sent));
        sent = whole.size();
      }
    }
    if (round == 0) {
      EXPECT_TRUE(waited) << "decoding never waited for bytes";
    }
    EXPECT_LE(most_held, (uint64_t{16} << 20) + (uint64_t{3} << 20)) << "more than the bound held undecoded";
    EXPECT_EQ(loading->fingerprint(), file_fingerprint(as_bytes(whole)));
    EXPECT_EQ(ws.finish(*loading),
              "rank 1: " + name + " (" + std::to_string(reference.ranks().front()->trace.size()) + " nodes)");
    ASSERT_EQ(ws.ranks().size(), 1u);
    EXPECT_EQ(encode_et(ws.ranks().front()->trace), expected) << "round " << round;
  }
}

TEST(Workspace, PiecesOfBadFilesAreRefusedEarlyAndCutOffTracesNamed) {
  Workspace ws;
  // A PNG: refused once its first 64 KiB are in, whatever its size.
  std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  png.resize(200000, 'x');
  auto image = ws.begin_pieces("big.png", png.size());
  image->add_bytes(as_bytes(png).first(1000));
  EXPECT_FALSE(image->step(100));
  EXPECT_THROW(image->add_bytes(as_bytes(png).subspan(1000, 70000)), Error);
  // An empty file: nothing will arrive, so it is said at once what it is not.
  auto empty = ws.begin_pieces("empty.et", 0);
  EXPECT_THROW(while (!empty->step(10)){}, Error);
  // More bytes than the file was said to have.
  auto over = ws.begin_pieces("x.et", 10);
  EXPECT_THROW(over->add_bytes(as_bytes(png).first(11)), Error);
  // A trace whose last record is cut off: the error names the file and the record.
  const std::string whole =
      testing_support::read_decompressed(shared("reference/chakra/outputs/trace_link/resnet_2gpu_rank1.et.gz"));
  const std::string cut = whole.substr(0, whole.size() - 5);
  auto loading = ws.begin_pieces("cut.et", cut.size());
  for (size_t at = 0; at < cut.size(); at += 1 << 20)
    loading->add_bytes(as_bytes(cut).subspan(at, std::min<size_t>(1 << 20, cut.size() - at)));
  try {
    while (!loading->step(4096)) {}
    FAIL() << "a cut-off trace loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cut.et: record "), std::string::npos) << e.what();
  }
  EXPECT_TRUE(ws.ranks().empty());
  // A gzip .et in pieces is gathered whole, then decoded: the same trace.
  const std::string gz = read_raw(shared("reference/chakra/outputs/trace_link/resnet_2gpu_rank1.et.gz"));
  auto packed = ws.begin_pieces("resnet.et.gz", gz.size());
  for (size_t at = 0; at < gz.size(); at += 100000)
    packed->add_bytes(as_bytes(gz).subspan(at, std::min<size_t>(100000, gz.size() - at)));
  while (!packed->step(4096)) {}
  ws.finish(*packed);
  ASSERT_EQ(ws.ranks().size(), 1u);
  Workspace reference;
  reference.add(as_bytes(whole), "resnet.et");
  EXPECT_EQ(encode_et(ws.ranks().front()->trace), encode_et(reference.ranks().front()->trace));
}

TEST(Workspace, PairsHostEtWithKinetoInEitherOrder) {
  std::string dir = shared("data/pairs/param_linear_rtx2080ti_1rank");
  std::string host = read_raw(dir + "/linear_et.json.gz"), kineto = read_raw(dir + "/linear_kineto.json.gz");
  Workspace a;
  // Alone, the Kineto trace shows its measured timeline: CPU threads and GPU streams, no replay.
  EXPECT_NE(a.add(as_bytes(kineto), "linear_kineto.json.gz").find("measured ops (its host ET links them"),
            std::string::npos);
  ASSERT_EQ(a.ranks().size(), 1u);
  const Trace& alone = a.ranks()[0]->trace;
  // Its one kind of dependency: a GPU op on the call that launched it, which began before it.
  size_t cpu = 0, gpu = 0, launched = 0;
  const IdIndex index(alone);
  for (uint32_t n = 0; n < alone.size(); ++n) {
    EXPECT_GT(alone.start_time_micros(n), 0u);
    const bool is_cpu = alone.find_attr(n, "is_cpu_op")->as_bool().value();
    ++(is_cpu ? cpu : gpu);
    if (is_cpu) {
      EXPECT_TRUE(alone.data_deps(n).empty());
      continue;
    }
    ASSERT_LE(alone.data_deps(n).size(), 1u);
    for (uint64_t id : alone.data_deps(n)) {
      const auto launch = index.find(id);
      ASSERT_TRUE(launch);
      EXPECT_TRUE(alone.find_attr(*launch, "is_cpu_op")->as_bool().value());
      EXPECT_LE(alone.start_time_micros(*launch), alone.start_time_micros(n));
      ++launched;
    }
  }
  EXPECT_GT(cpu, 1000u);
  EXPECT_GT(gpu, 8000u);  // every kernel of the run (the host ET links those of one iteration)
  EXPECT_GT(launched, gpu * 9 / 10);
  const Trace* ranks[] = {&alone};
  TimelineModel m = timeline_of_traces(ranks);
  EXPECT_TRUE(std::any_of(m.lane_class_names.begin(), m.lane_class_names.end(),
                          [](const std::string& n) { return n.rfind("stream ", 0) == 0; }));
  EXPECT_TRUE(std::any_of(m.lane_class_names.begin(), m.lane_class_names.end(),
                          [](const std::string& n) { return n.rfind("thread ", 0) == 0; }));
  EXPECT_EQ(a.ranks()[0]->report.errors, 0u);
  // A damaged Kineto trace alone is an error that adds nothing.
  Workspace c;
  const std::string cut = kineto.substr(0, kineto.size() / 2);
  EXPECT_THROW(c.add(as_bytes(cut), "linear_kineto.json.gz"), Error);
  EXPECT_TRUE(c.ranks().empty());
  EXPECT_NE(c.add(as_bytes(host), "linear_et.json.gz").find("converted host ET"), std::string::npos);  // unpaired
  // Its host ET replaces it with the linked conversion, which says what it left out.
  EXPECT_NE(a.add(as_bytes(host), "linear_et.json.gz").find("linked and converted"), std::string::npos);
  const std::vector<std::string>& warned = a.ranks()[0]->warnings;
  EXPECT_TRUE(std::any_of(warned.begin(), warned.end(), [](const std::string& w) {
    return w.find("8496 of the Kineto trace's 8716 GPU ops are left out") != std::string::npos;
  })) << testing::PrintToString(warned);
  Workspace b;
  EXPECT_NE(b.add(as_bytes(host), "linear_et.json.gz").find("converted host ET"), std::string::npos);
  uint64_t unlinked_nodes = b.ranks()[0]->trace.size();
  b.add(as_bytes(kineto), "linear_kineto.json.gz");
  ASSERT_EQ(a.ranks().size(), 1u);
  ASSERT_EQ(b.ranks().size(), 1u);
  EXPECT_EQ(encode_et(a.ranks()[0]->trace), encode_et(b.ranks()[0]->trace));
  EXPECT_GT(a.ranks()[0]->summary.by_type[static_cast<int>(NodeType::CommColl)].nodes +
                a.ranks()[0]->summary.by_type[static_cast<int>(NodeType::Comp)].nodes,
            0u);
  EXPECT_GE(a.ranks()[0]->trace.size(), unlinked_nodes);
  EXPECT_EQ(a.ranks()[0]->report.errors, 0u);
}

// A page links and converts PyTorch ranks in a Web Worker: the workspace hands out one job per
// rank for its latest files, the job and its result travel as bytes, the result opens to the
// same rank as converting in place, and results for files since replaced are ignored.
TEST(Workspace, ConversionsRunElsewhereToTheSameRanks) {
  std::string dir = shared("data/pairs/param_linear_rtx2080ti_1rank");
  std::string host = read_raw(dir + "/linear_et.json.gz"), kineto = read_raw(dir + "/linear_kineto.json.gz");
  Workspace here;
  here.add(as_bytes(host), "linear_et.json.gz");
  here.add(as_bytes(kineto), "linear_kineto.json.gz");
  ASSERT_EQ(here.ranks().size(), 1u);

  Workspace ws;
  auto open = [&](const std::string& bytes, const std::string& name) {  // without add()'s conversion
    auto loading = ws.begin(as_bytes(bytes), name);
    return ws.finish(*loading);
  };
  EXPECT_EQ(open(host, "linear_et.json.gz"), "");
  EXPECT_EQ(open(kineto, "linear_kineto.json.gz"), "");
  EXPECT_TRUE(ws.ranks().empty());
  EXPECT_TRUE(ws.conversions_waiting());
  std::vector<RankConversion> jobs = ws.take_conversions();
  ASSERT_EQ(jobs.size(), 1u);  // both files, one job
  EXPECT_FALSE(ws.conversions_waiting());
  EXPECT_TRUE(ws.take_conversions().empty());
  const RankConversion job = decode_conversion(encode_conversion(jobs[0]));
  EXPECT_EQ(job.host, host);  // as given: gzip
  EXPECT_EQ(job.kineto, kineto);
  EXPECT_EQ(job.kineto_name, "linear_kineto.json.gz");
  const std::string result = encode_converted(convert_rank(job));
  auto opening = ws.begin_converted(decode_converted(result));
  ASSERT_TRUE(opening);
  EXPECT_NE(ws.finish(*opening).find("rank 0: linked and converted linear_et.json.gz + linear_kineto.json.gz"),
            std::string::npos);
  ASSERT_EQ(ws.ranks().size(), 1u);
  const RankTrace& a = *here.ranks()[0];
  const RankTrace& b = *ws.ranks()[0];
  EXPECT_EQ(encode_et(a.trace), encode_et(b.trace));
  EXPECT_EQ(a.notes, b.notes);
  EXPECT_EQ(a.warnings, b.warnings);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(b.bytes, host.size() + kineto.size());
  EXPECT_EQ(here.groups, ws.groups);

  // Rank 0's Kineto trace given again: the result in flight is stale, the new job comes.
  open(kineto, "linear_kineto.rank0.json.gz");
  EXPECT_FALSE(ws.begin_converted(decode_converted(result)));
  EXPECT_FALSE(ws.conversion_failed(0, job.generation));
  auto late = ws.begin_converted(convert_rank(ws.take_conversions().at(0)));
  ws.clear();
  EXPECT_FALSE(ws.begin_converted(decode_converted(result)));  // nor after clear()
  EXPECT_EQ(ws.finish(*late), "");                             // opened before clear(), finished after: nothing stays
  EXPECT_TRUE(ws.ranks().empty());
  EXPECT_FALSE(ws.conversions_waiting());

  // A conversion that fails drops the files since the last good one: the workspace is as before.
  EXPECT_EQ(open(host, "linear_et.json.gz"), "");
  RankConversion alone = ws.take_conversions().at(0);
  ws.finish(*ws.begin_converted(convert_rank(alone)));
  const std::string unlinked = encode_et(ws.ranks().at(0)->trace);
  open(kineto.substr(0, kineto.size() / 2), "cut_kineto.json.gz");
  RankConversion bad = ws.take_conversions().at(0);
  EXPECT_THROW(convert_rank(bad), Error);
  EXPECT_TRUE(ws.conversion_failed(bad.rank, bad.generation));
  EXPECT_FALSE(ws.conversions_waiting());  // the rank already shows these files' conversion
  EXPECT_EQ(encode_et(ws.ranks().at(0)->trace), unlinked);
  open(kineto, "linear_kineto.json.gz");
  RankConversion again = ws.take_conversions().at(0);
  EXPECT_EQ(again.host_name, "linear_et.json.gz");
  EXPECT_EQ(again.kineto, kineto);
  // The first file of a rank failing leaves no trace of the rank.
  ws.clear();
  open(kineto.substr(0, kineto.size() / 2), "cut_kineto.json.gz");
  RankConversion first = ws.take_conversions().at(0);
  EXPECT_TRUE(ws.conversion_failed(first.rank, first.generation));
  EXPECT_FALSE(ws.conversions_waiting());
  EXPECT_TRUE(ws.ranks().empty());
  open(host, "linear_et.json.gz");
  EXPECT_TRUE(ws.take_conversions().at(0).kineto.empty());

  // Damaged messages are errors naming what they are, never crashes.
  const std::string sent = encode_conversion(job);
  for (const std::string* bytes : {&sent, &result})
    for (size_t cut = 0; cut < bytes->size(); cut += 1 + cut / 16) {
      EXPECT_THROW(decode_conversion(std::string_view(*bytes).substr(0, cut)), Error) << cut;
      EXPECT_THROW(decode_converted(std::string_view(*bytes).substr(0, cut)), Error) << cut;
    }
  try {
    decode_converted(sent);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "converted rank: not produced by this version of chakrakit");
  }
}

// A Kineto trace's own distributedInfo names its rank, whatever dates or versions its file
// name has; a name naming another rank is an error that leaves the workspace as it was.
TEST(Workspace, KinetoTraceStatesItsRank) {
  std::string dir = shared("data/pairs/dlrm_8rank_v100/rank3");
  std::string kineto = read_raw(dir + "/worker3_step_12.1694128201557.pt.trace.json");
  Workspace ws;
  EXPECT_NE(ws.add(as_bytes(kineto), "trace.2023-07.json").find("rank 3: Kineto trace"), std::string::npos);
  Workspace clash;
  try {
    clash.add(as_bytes(kineto), "worker_5.json");
    ADD_FAILURE() << "no error";
  } catch (const chakra::Error& e) {
    EXPECT_NE(std::string(e.what()).find("worker_5.json: the trace says it is rank 3"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(clash.ranks().empty());
}

TEST(Workspace, TextWorkloadsConfigsAndBadFiles) {
  Workspace ws;
  std::string text = read_raw(shared("data/text_workloads/astra-sim-1.0__Resnet50_DataParallel.txt"));
  EXPECT_NE(ws.add(as_bytes(text), "Resnet50_DataParallel.txt").find("8 NPUs"), std::string::npos);
  EXPECT_EQ(ws.ranks().size(), 8u);
  ws.set_text_npus(4);
  EXPECT_EQ(ws.ranks().size(), 4u);
  ws.add(as_bytes(read_raw(shared("reference/astra-sim/inputs/net/ring_8.yml"))), "ring_8.yml");
  ASSERT_TRUE(ws.network.has_value());
  EXPECT_EQ(ws.network->total_npus(), 8u);
  ws.add(as_bytes(read_raw(shared("reference/astra-sim/inputs/sys/ring_s4_c1.json"))), "ring_s4_c1.json");
  EXPECT_TRUE(ws.system.has_value());
  // Bad inputs name the file and leave the workspace as it was.
  std::string et = read_raw(shared("data/chakra_et/ericding_pytorch_converted_2rank/chakra_trace.0.et"));
  EXPECT_THROW(ws.add(as_bytes(et.substr(0, et.size() / 2)), "cut.0.et"), Error);
  EXPECT_THROW(ws.add(as_bytes(std::string("hello")), "notes.md"), Error);
  try {
    ws.add(as_bytes(std::string("{\"schema\": \"1.0\", \"nodes\": [ {\"id\": ")), "broken_et.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("broken_et.json"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ws.ranks().size(), 4u);
}

TEST(ClusterPresets, ParseAndFitToTheRankCount) {
  const auto& presets = chakra::cluster_presets();
  ASSERT_GE(presets.size(), 4u);
  for (const auto& p : presets) {
    EXPECT_FALSE(p.source.empty()) << p.name;
    EXPECT_EQ(p.system.algorithms[0].size(), p.network.topology.size()) << p.name;
  }
  // The ASTRA-sim example preset is exactly the reference files.
  const chakra::ClusterPreset& ring = chakra::cluster_preset("astra-sim-ring-8");
  EXPECT_EQ(astra::format_network(ring.network),
            astra::format_network(astra::load_network(shared("reference/astra-sim/inputs/net/ring_8.yml"))));
  EXPECT_EQ(astra::format_system(ring.system),
            astra::format_system(astra::load_system(shared("reference/astra-sim/inputs/sys/ring_s4_c1.json"))));
  EXPECT_THROW(chakra::cluster_preset("nope"), Error);
  const astra::NetworkConfig& ib = chakra::cluster_preset("h100-ib-2x8").network;
  EXPECT_EQ(chakra::fit_network(ib, 32).npus, (std::vector<uint32_t>{8, 4}));
  EXPECT_EQ(chakra::fit_network(ib, 32).bandwidth, (std::vector<double>{450, 50}));
  EXPECT_EQ(chakra::fit_network(ib, 2).npus, (std::vector<uint32_t>{2}));
  EXPECT_EQ(chakra::fit_network(ib, 2).bandwidth, (std::vector<double>{450}));
  EXPECT_EQ(chakra::fit_network(ib, 12).npus, (std::vector<uint32_t>{12}));
  const astra::NetworkConfig& tpu = chakra::cluster_preset("tpu-v4-4x4x4").network;
  EXPECT_EQ(chakra::fit_network(tpu, 128).npus, (std::vector<uint32_t>{4, 4, 8}));
  EXPECT_EQ(chakra::fit_network(tpu, 8).npus, (std::vector<uint32_t>{4, 2}));
  EXPECT_THROW(chakra::fit_network(tpu, 1), Error);
  astra::SystemConfig sys = chakra::cluster_preset("tpu-v4-4x4x4").system;
  chakra::fit_system(sys, 2);
  EXPECT_EQ(sys.algorithms[0].size(), 2u);
  chakra::fit_system(sys, 4);
  EXPECT_EQ(sys.algorithms[3].size(), 4u);
}

// A small synthetic step: llama2-7b, 2 layers, DP 2 × TP 2.
synth::SynthOptions small_llama() {
  synth::SynthOptions o;
  synth::apply_preset("llama2-7b", o);
  o.shape.layers = 2;
  o.par.dp = 2;
  o.par.tp = 2;
  return o;
}

TEST(Workspace, SyntheticWorkloadsSimulateOnAPreset) {
  Workspace ws;
  synth::SynthOptions o = small_llama();
  EXPECT_EQ(ws.add_synthetic(o), "synthetic workload: 4 ranks, 1 pipeline stages");
  ASSERT_EQ(ws.ranks().size(), 4u);
  EXPECT_FALSE(ws.groups.empty());
  chakra::ClusterPreset p = chakra::cluster_preset("h100-hgx-8");
  astra::SystemConfig sys = p.system;
  sys.roofline = true;
  sim::SimResult r = ws.simulate(chakra::fit_network(p.network, 4), sys);
  EXPECT_FALSE(r.deadlock);
  EXPECT_GT(r.end(), 0u);
  EXPECT_GT(r.collectives[0].count, 0u);
  o.par.tp = 3;
  EXPECT_THROW(ws.add_synthetic(o), Error);
  EXPECT_EQ(ws.ranks().size(), 4u);
}

// The analyses of a simulated run, from its spans, agree with the simulator's own per-NPU
// accounting: compute, communication and their overlap are the same unions of intervals.
TEST(Workspace, AnalysesOfASimulatedRunMatchTheSimulatorsBreakdown) {
  Workspace ws;
  ws.add_synthetic(small_llama());
  chakra::ClusterPreset p = chakra::cluster_preset("h100-hgx-8");
  astra::SystemConfig sys = p.system;
  sys.roofline = true;
  sim::SimOptions options;
  options.record_spans = true;
  sim::SimResult r = ws.simulate(chakra::fit_network(p.network, 4), sys, options);
  ASSERT_EQ(r.npus.size(), 4u);
  uint64_t overlapped = 0;
  for (uint32_t npu = 0; npu < 4; ++npu) {
    const GpuAnalysis a = analyze_spans(r.spans, npu);
    EXPECT_GT(a.ops, 0u);
    EXPECT_EQ(a.compute, r.npus[npu].compute) << npu;
    EXPECT_EQ(a.communication, r.npus[npu].comm) << npu;
    EXPECT_EQ(a.comm_overlapped, r.npus[npu].overlap) << npu;
    EXPECT_EQ(a.span, a.idle + a.compute + a.non_compute);
    overlapped += a.comm_overlapped;
  }
  EXPECT_GT(overlapped, 0u);  // the test would not see a wrong overlap otherwise
}

// The critical path of a simulated run spans its step exactly (from time 0 to the last NPU's
// finish), steps contiguous, and on a simulation nothing on it is unexplained waiting: every
// node started when a dependency, its resource or its collective's last peer let it.
TEST(Workspace, CriticalPathOfASimulatedRunIsItsStep) {
  for (uint32_t pp : {1u, 2u}) {
    Workspace ws;
    synth::SynthOptions o = small_llama();
    o.par.pp = pp;
    ws.add_synthetic(o);
    chakra::ClusterPreset p = chakra::cluster_preset("h100-hgx-8");
    astra::SystemConfig sys = p.system;
    sys.roofline = true;
    sim::SimOptions options;
    options.record_spans = true;
    const uint32_t npus = static_cast<uint32_t>(ws.ranks().size());
    sim::SimResult r = ws.simulate(chakra::fit_network(p.network, npus), sys, options);
    ASSERT_FALSE(r.deadlock);
    std::vector<RankTimes> times;
    for (uint32_t npu = 0; npu < npus; ++npu) times.push_back(simulated_times(ws.rank(npu)->trace, r.spans, npu));
    const CrossRankPath path = critical_path_across_ranks(times);
    EXPECT_TRUE(path.complete);
    EXPECT_EQ(path.begin, 0u);
    EXPECT_EQ(path.end, r.end());
    uint64_t t = 0;
    for (const auto& s : path.steps) {
      EXPECT_EQ(s.start, t);
      t += s.duration;
    }
    EXPECT_EQ(t, r.end()) << "pp " << pp;
    EXPECT_EQ(path.by_kind[int(PathKind::Waiting)], 0u) << "pp " << pp;
    EXPECT_GT(path.by_kind[int(PathKind::Compute)], 0u);
    EXPECT_GT(path.by_kind[int(PathKind::Communication)], 0u);
  }
}

// A run's collectives by type and size, from its simulated durations: as many, as many bytes,
// and as much time (to the µs) as the simulator's own totals.
TEST(Workspace, CollectiveBucketsOfASimulatedRun) {
  Workspace ws;
  ws.add_synthetic(small_llama());
  chakra::ClusterPreset p = chakra::cluster_preset("h100-hgx-8");
  sim::SimOptions options;
  options.record_spans = true;
  sim::SimResult r = ws.simulate(chakra::fit_network(p.network, 4), p.system, options);
  std::vector<const Trace*> traces;
  std::vector<std::vector<uint64_t>> micros;
  for (uint32_t npu = 0; npu < 4; ++npu) {
    traces.push_back(&ws.rank(npu)->trace);
    micros.push_back(simulated_micros(ws.rank(npu)->trace, r.spans, npu));
  }
  uint64_t count = 0, bytes = 0, time = 0, sim_count = 0, sim_bytes = 0, sim_time = 0;
  for (const CollectiveBucket& b : collective_buckets(traces, micros))
    count += b.count, bytes += b.bytes, time += b.micros;
  for (const sim::CollectiveTotals& c : r.collectives) sim_count += c.count, sim_bytes += c.bytes, sim_time += c.time;
  EXPECT_GT(count, 0u);
  EXPECT_EQ(count, sim_count);
  EXPECT_EQ(bytes, sim_bytes);
  EXPECT_NEAR(double(time), double(sim_time) / 1000, double(count));  // each rounded to the µs
}

TEST(TimelineModel, RecordedTimelinesSkipRanksWithoutStartTimes) {
  std::vector<Trace> traces(2);
  NodeDraft d;
  for (uint64_t i = 0; i < 3; ++i) {
    d.clear();
    d.id = i;
    d.duration_micros = 5;
    traces[0].append(d);  // durations, every start 0
    d.start_time_micros = 10 * i + 1;
    traces[1].append(d);
  }
  std::vector<const Trace*> ranks{&traces[0], &traces[1]};
  TimelineModel m = timeline_of_traces(ranks);
  EXPECT_EQ(m.events, 3u);
  ASSERT_EQ(m.tracks.size(), 1u);
  EXPECT_EQ(m.tracks[0].group, 1u);
  EXPECT_EQ(m.begin, 1u);
  EXPECT_EQ(m.end, 26u);
  EXPECT_EQ(m.unit, "us");
}

// Measured traces show as profilers show them: a track per CPU thread, then one per GPU stream,
// named, with kernels, copies and communication told apart.
TEST(TimelineModel, RecordedTimelinesHaveATrackPerThreadAndStream) {
  Trace t;
  NodeDraft d;
  auto add = [&](uint64_t id, const char* name, NodeType type, bool cpu, int64_t lane, uint64_t start) {
    d.clear();
    d.id = id;
    d.name = t.intern(name);
    d.type = static_cast<int32_t>(type);
    d.duration_micros = 4;
    d.start_time_micros = start;
    d.attrs.add_bool(t.intern("is_cpu_op"), cpu);
    d.attrs.add_int64(t.intern(cpu ? "tid" : "stream"), lane);
    t.append(d);
  };
  add(1, "aten::mm", NodeType::Comp, true, 2, 10);
  add(2, "autograd::engine", NodeType::Comp, true, 9, 11);
  add(3, "gemm", NodeType::Comp, false, 7, 12);
  add(4, "Memcpy HtoD (Pinned -> Device)", NodeType::Comp, false, 7, 20);
  add(5, "ncclKernel_AllReduce", NodeType::CommColl, false, 24, 13);
  std::vector<const Trace*> ranks{&t};
  TimelineModel m = timeline_of_traces(ranks);
  EXPECT_EQ(m.lane_class_names, (std::vector<std::string>{"thread 2", "thread 9", "stream 7", "stream 24"}));
  ASSERT_EQ(m.tracks.size(), 4u);
  auto kind_of = [&](uint32_t item) {
    auto ref = m.find(0, item);
    return static_cast<TimelineActivity>(m.tracks[ref->track].category[ref->index]);
  };
  EXPECT_EQ(kind_of(0), TimelineActivity::CpuOp);
  EXPECT_EQ(kind_of(2), TimelineActivity::Kernel);
  EXPECT_EQ(kind_of(3), TimelineActivity::Copy);
  EXPECT_EQ(kind_of(4), TimelineActivity::Communication);
  EXPECT_EQ(m.tracks[m.find(0, 3)->track].lane_class, 2u);  // the copy runs on stream 7, after gemm
  EXPECT_EQ(m.find(0, 3)->track, m.find(0, 2)->track);
  EXPECT_EQ(m.categories, TimelineCategories::ActivityKind);
}

TEST(NodeSearch, MatchesNamesTypesIdsAndStringAttributesCaseInsensitively) {
  Trace t;
  NodeDraft d;
  const char* names[] = {"aten::linear", "ncclAllReduce", "aten::relu"};
  for (uint64_t i = 0; i < 3; ++i) {
    d.clear();
    d.id = 100 + i;
    d.name = t.intern(names[i]);
    d.type = i == 1 ? static_cast<int32_t>(NodeType::CommColl) : static_cast<int32_t>(NodeType::Comp);
    if (i == 2) d.attrs.add_string(t.intern("pg_name"), t.intern("TP_group"));
    d.attrs.add_list(t.intern("shape"), AttrKind::Int64List, std::vector<uint64_t>{2, 3});
    t.append(d);
  }
  EXPECT_EQ(search_nodes(t, ""), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(search_nodes(t, "ATEN"), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(search_nodes(t, "comm_coll"), (std::vector<uint32_t>{1}));
  EXPECT_EQ(search_nodes(t, "101"), (std::vector<uint32_t>{1}));
  EXPECT_EQ(search_nodes(t, "tp_gr"), (std::vector<uint32_t>{2}));
  EXPECT_TRUE(search_nodes(t, "nothing like it").empty());
  EXPECT_EQ(attr_value_text(t, t.attr(t.attr_begin(2))), "\"TP_group\"");
  EXPECT_EQ(attr_value_text(t, t.attr(t.attr_begin(0))), "[2, 3]");
  EXPECT_EQ(attr_value_text(t, t.attr(t.attr_begin(0)), 1), "[2, … (2 in all)]");
}

namespace {
// A synthetic workload with communicator groups, on a preset fitted to its ranks.
struct SyntheticRun {
  Workspace ws;
  astra::NetworkConfig net;
  astra::SystemConfig sys;
  explicit SyntheticRun(uint64_t layers, uint64_t dp) {
    synth::SynthOptions o;
    synth::apply_preset("llama2-7b", o);
    o.shape.layers = layers;
    o.par.dp = dp;
    o.par.tp = 2;
    ws.add_synthetic(o);
    chakra::ClusterPreset p = chakra::cluster_preset("h100-hgx-8");
    net = chakra::fit_network(p.network, ws.ranks().size());
    sys = p.system;
    sys.roofline = true;
  }
};

void expect_same(const sim::SimResult& a, const sim::SimResult& b) {
  ASSERT_EQ(a.npus.size(), b.npus.size());
  for (size_t i = 0; i < a.npus.size(); ++i) {
    EXPECT_EQ(a.npus[i].finish, b.npus[i].finish);
    EXPECT_EQ(a.npus[i].astra_exposed_comm, b.npus[i].astra_exposed_comm);
    EXPECT_EQ(a.npus[i].overlap, b.npus[i].overlap);
    EXPECT_EQ(a.npus[i].nodes, b.npus[i].nodes);
    EXPECT_EQ(a.npus[i].stuck, b.npus[i].stuck);
    EXPECT_EQ(a.npus[i].measured_step, b.npus[i].measured_step);
    EXPECT_EQ(a.npus[i].start, b.npus[i].start);
  }
  ASSERT_EQ(a.measured_collectives.size(), b.measured_collectives.size());
  for (size_t i = 0; i < a.measured_collectives.size(); ++i) {
    const sim::CollectiveFit &x = a.measured_collectives[i], &y = b.measured_collectives[i];
    EXPECT_TRUE(x.comm_type == y.comm_type && x.count == y.count && x.measured_median == y.measured_median &&
                x.simulated_median == y.simulated_median);
  }
  for (int c = 0; c <= astra::kCollectiveTypes; ++c) {
    EXPECT_EQ(a.collectives[c].count, b.collectives[c].count);
    EXPECT_EQ(a.collectives[c].bytes, b.collectives[c].bytes);
    EXPECT_EQ(a.collectives[c].time, b.collectives[c].time);
  }
  EXPECT_EQ(a.messages, b.messages);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.simulated_npus, b.simulated_npus);
  EXPECT_EQ(a.deadlock, b.deadlock);
  ASSERT_EQ(a.spans.size(), b.spans.size());
  for (size_t i = 0; i < a.spans.size(); ++i) {
    const sim::Span &x = a.spans[i], &y = b.spans[i];
    ASSERT_TRUE(x.npu == y.npu && x.kind == y.kind && x.node == y.node && x.start == y.start && x.end == y.end &&
                x.name == y.name)
        << "span " << i;
  }
}
}  // namespace

TEST(SimJob, TravelsAsBytesAndRunsToTheSameResult) {
  SyntheticRun run(2, 2);
  sim::SimOptions options;
  options.record_spans = true;
  options.backend = sim::Backend::CongestionAware;
  options.slowdown = sim::parse_slowdowns("npu=1:compute=1.5:comm=2:delay=3us; dim=all:bandwidth=0.5", "s");
  options.every_npu = true;
  chakra::SimJob job = run.ws.simulation_job(run.net, run.sys, options);
  uint64_t nodes = 0;
  for (const auto& r : run.ws.ranks()) nodes += r->trace.size();
  EXPECT_EQ(job.options.expected_nodes, nodes);
  std::string bytes = chakra::encode_job(job);
  chakra::SimJob back = chakra::decode_job(bytes);
  EXPECT_EQ(chakra::encode_job(back), bytes);  // nothing lost
  EXPECT_EQ(back.traces, job.traces);
  EXPECT_EQ(back.groups, run.ws.groups);
  EXPECT_EQ(back.options.backend, sim::Backend::CongestionAware);
  EXPECT_TRUE(back.options.record_spans);
  EXPECT_TRUE(back.options.every_npu);
  EXPECT_EQ(back.options.slowdown.compute_of(1), 1.5);
  EXPECT_EQ(back.options.slowdown.delay_of(1), 3000u);
  EXPECT_EQ(back.options.slowdown.bandwidth_of(0), 0.5);

  sim::SimResult here = run.ws.simulate(run.net, run.sys, options);
  ASSERT_GT(here.spans.size(), 100u);
  EXPECT_GT(here.collectives[0].count, 0u);
  sim::SimResult there = chakra::decode_result(chakra::encode_result(chakra::run_job(back)));
  expect_same(here, there);
}

// A replay's measured figures cross from the worker to the page too.
TEST(SimJob, ResultKeepsMeasuredFigures) {
  sim::SimResult r;
  r.npus.resize(2);
  r.npus[0].finished = r.npus[1].finished = true;
  r.npus[0].finish = 900, r.npus[0].measured_step = 1000;
  r.npus[1].finish = 1500, r.npus[1].start = 400, r.npus[1].measured_step = 1050;
  r.measured_collectives.push_back(sim::CollectiveFit{6, 40, 357000, 422157});
  r.closed_form_contended = true;
  r.simulated_npus = 1;  // NPU 0 ran for both
  sim::SimResult back = chakra::decode_result(chakra::encode_result(r));
  expect_same(r, back);
  EXPECT_TRUE(back.closed_form_contended);
  EXPECT_EQ(back.simulated_npus, 1u);
  EXPECT_FALSE(back.deadlock);
  EXPECT_EQ(back.npus[1].start, 400u);
  EXPECT_EQ(back.measured_collectives.at(0).simulated_median, 422157u);
}

TEST(SimJob, DamagedBytesAreErrorsNeverCrashes) {
  SyntheticRun run(1, 2);
  sim::SimOptions options;
  options.record_spans = true;
  std::string job = chakra::encode_job(run.ws.simulation_job(run.net, run.sys, options));
  std::string result = chakra::encode_result(run.ws.simulate(run.net, run.sys, options));
  // Every truncation is refused.
  for (size_t cut = 0; cut < job.size(); cut += 1 + cut / 64)
    EXPECT_THROW(chakra::decode_job(std::string_view(job).substr(0, cut)), Error) << cut;
  for (size_t cut = 0; cut < result.size(); cut += 1 + cut / 64)
    EXPECT_THROW(chakra::decode_result(std::string_view(result).substr(0, cut)), Error) << cut;
  EXPECT_THROW(chakra::decode_result(job), Error);  // the other kind
  EXPECT_THROW(chakra::decode_job(job + "x"), Error);
  // Random corruption decodes or throws chakra::Error (a trace's own damage shows when it runs).
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    std::string bad = result;
    for (int k = 0; k < 4; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    try {
      chakra::decode_result(bad);
    } catch (const Error&) {}
  }
  try {
    chakra::decode_result(std::string_view(result).substr(0, 12));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "simulation result: truncated");
  }
}

TEST(SimJob, ProgressCountsNodesAndCanStopTheRun) {
  SyntheticRun run(4, 16);  // enough events for several progress reports
  struct Recorder : Progress {
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    size_t stop_at = SIZE_MAX;
    bool report(std::string_view stage, uint64_t done, uint64_t total) override {
      EXPECT_EQ(stage, "simulate");
      calls.emplace_back(done, total);
      return calls.size() < stop_at;
    }
  } seen;
  chakra::SimJob job = run.ws.simulation_job(run.net, run.sys);
  job.options.every_npu = true;  // its DP replicas would run as one, in too few events to report
  sim::SimResult r = chakra::run_job(job, &seen);
  ASSERT_GE(seen.calls.size(), 2u);
  for (size_t i = 0; i < seen.calls.size(); ++i) {
    EXPECT_EQ(seen.calls[i].second, job.options.expected_nodes);
    EXPECT_LE(seen.calls[i].first, job.options.expected_nodes);
    if (i > 0) {
      EXPECT_GE(seen.calls[i].first, seen.calls[i - 1].first);
    }
  }
  uint64_t ran = 0;
  for (const auto& n : r.npus) ran += n.nodes;
  EXPECT_EQ(ran, job.options.expected_nodes);
  Recorder stopper;
  stopper.stop_at = 1;
  EXPECT_THROW(chakra::run_job(job, &stopper), Cancelled);
  EXPECT_EQ(stopper.calls.size(), 1u);
}
