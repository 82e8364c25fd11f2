// The data model behind interactive timelines: events packed into tracks, and per-frame queries
// whose cost depends on the pixels shown, not on the number of events (so a view of a million
// events stays interactive). Used by the web app's timeline; no drawing here.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "chakra/sim/simulate.h"
#include "chakra/trace/trace.h"

namespace chakra {

// One event to place: `group` is the rank/NPU, `lane_class` splits a group into kinds of tracks
// (e.g. compute and communication), `item` is the caller's handle (a node position).
struct TimelineEvent {
  uint32_t group = 0;
  uint32_t lane_class = 0;
  uint64_t start = 0, end = 0;  // end >= start; time unit is the model's
  uint32_t item = 0;
  uint8_t category = 0;
};

// Events of one track, sorted by start and pairwise disjoint (so ends are sorted too); columns.
struct TimelineTrack {
  uint32_t group = 0, lane_class = 0, lane = 0;
  std::vector<uint64_t> start, end;
  std::vector<uint32_t> item;
  std::vector<uint8_t> category;
  size_t size() const { return start.size(); }
};

// What the events' `category` means in a model.
enum class TimelineCategories : uint8_t {
  ActivityKind,  // timeline_of_traces: TimelineActivity
  SpanKind,      // timeline_of_spans: sim::SpanKind
};
// Kinds of measured activity, told apart by colour: what ran on a CPU thread, and on a GPU stream
// compute kernels, copies (memcpy / memset) and communication (NCCL kernels, SEND/RECV).
enum class TimelineActivity : uint8_t { CpuOp, Kernel, Copy, Communication, Other };
const char* timeline_activity_name(TimelineActivity a);

struct TimelineModel {
  std::vector<TimelineTrack> tracks;  // by (group, lane_class, lane)
  // Track names per lane class ("thread 1", "stream 7", "comm"), empty for the group's first.
  std::vector<std::string> lane_class_names;
  TimelineCategories categories = TimelineCategories::ActivityKind;
  uint64_t begin = 0, end = 0;  // earliest start and latest end over all events
  std::string unit = "us";      // "us" (trace timestamps) or "ns" (simulated)
  uint64_t events = 0;

  struct Ref {
    uint32_t track = 0, index = 0;
  };
  // Where the event with this (group, item) went; O(log events).
  std::optional<Ref> find(uint32_t group, uint32_t item) const;

  std::vector<std::pair<uint64_t, Ref>> by_item_;  // (group << 32 | item) -> place, sorted
};

// A group's name: "rank 3" (recorded times) or "npu 3" (simulated).
std::string timeline_group_label(const TimelineModel& model, uint32_t group);
// A track's name: "rank 0 thread 1", "rank 0 stream 7 .2" (its third lane), "npu 3 comm".
std::string timeline_track_label(const TimelineModel& model, const TimelineTrack& track);

// Packs events into tracks: per (group, lane_class) each event takes the lowest-numbered lane that
// is free at its start (nested events stack like a flame graph). O(n log n).
TimelineModel build_timeline(std::vector<TimelineEvent> events, std::string unit);

// Recorded times of traces (rank = position in `ranks`): every node with a duration, at its
// start_time_micros, category = TimelineActivity. CPU ops (is_cpu_op) get a lane class per
// thread ("tid"), GPU ops one per stream ("stream"), as profilers show them; nodes without
// is_cpu_op share one. Ranks whose nodes all start at 0 (durations without timestamps) are left
// out; empty when no rank has both.
TimelineModel timeline_of_traces(std::span<const Trace* const> ranks);

// Simulated spans (ns): lane class 0 for compute, CPU and memory, 1 for communication; item =
// the node's position in ranks[npu] (found by id), category = SpanKind.
TimelineModel timeline_of_spans(std::span<const sim::Span> spans, std::span<const Trace* const> ranks);

// The rows a timeline shows. Pinned tracks come first, in a band that stays under the axis while
// the rest scrolls (they also keep their place below). Then every group in order: one row per
// track, or, for a collapsed group, a single row in which all its tracks are drawn.
struct TimelineRow {
  uint32_t group = 0;
  uint32_t first_track = 0, tracks = 1;  // the model's tracks [first_track, first_track + tracks)
  bool collapsed = false;                // a whole group in one row
  bool group_start = false;              // its group's first row (where the group is folded)
};
struct TimelineRows {
  std::vector<TimelineRow> pinned, rows;
  std::vector<uint32_t> row_of_track;  // [track] = the row of `rows` that shows it
  // Rows of `rows` in [first, last] (clamped), as tracks in ascending order.
  std::vector<uint32_t> tracks_of_rows(size_t first, size_t last) const;
};
// A track named by what stays when the model is rebuilt (another source, the same ranks).
struct TimelineTrackKey {
  uint32_t group = 0, lane_class = 0, lane = 0;
  bool operator==(const TimelineTrackKey&) const = default;
};
// The track with this key, if the model has one. O(log tracks).
std::optional<uint32_t> find_track(const TimelineModel& model, const TimelineTrackKey& key);
// `pinned` keys the model lacks are left out; `collapsed(group)` says whether a group is folded.
// O(tracks).
TimelineRows timeline_rows(const TimelineModel& model, std::span<const TimelineTrackKey> pinned,
                           const std::function<bool(uint32_t group)>& collapsed);

// A rectangle to draw: x in pixels from the view's left edge. count > 1: a run of events too
// small to show one by one, merged (first = index of the first of them in the track).
struct TimelineRect {
  double x0 = 0, x1 = 0;
  uint32_t first = 0, count = 1;
  uint8_t category = 0;
};

// Appends the rects of `track` visible in [t0, t1) at `px_per_unit` pixels per time unit. Events
// narrower than a pixel merge with their neighbours when the gap between them is under a pixel, so
// the work per call is O((pixels + events wider than a pixel) × log n).
void visible_rects(const TimelineTrack& track, double t0, double t1, double px_per_unit,
                   std::vector<TimelineRect>& out);

// The smallest round step (1, 2 or 5 × 10^k) of at least `raw`, for axis ticks; 1 when `raw` is
// not a positive finite number.
double round_step(double raw);

// The axis ticks of the window [t0, t1): the times origin + k·step inside it, so that their
// labels (tick − origin) are round multiples of `step` whatever the origin (measured traces
// start at epoch timestamps). At most 10,000 ticks; none when step is not positive.
std::vector<double> axis_ticks(double origin, double t0, double t1, double step);

// A visible window kept on the data [begin, end]: no wider than the data with a margin of
// kWindowMargin of its length on each side, not panned beyond that margin, at least `min_span`
// wide, finite. A non-finite window becomes the whole data with its margins.
constexpr double kWindowMargin = 0.025;
std::pair<double, double> clamp_window(double t0, double t1, double begin, double end, double min_span = 1e-3);

// The window that shows an event [start, end) with 10% of its length free on each side (an
// event shorter than 1e-4 of `whole` gets that much room).
std::pair<double, double> focus_window(double start, double end, double whole);

// Busy time in each of `bins` equal bins of [begin, end], summed over every track (an overview
// strip's density: up to the number of tracks times the bin's width). O(events + bins).
std::vector<double> busy_per_bin(const TimelineModel& model, size_t bins);

// The events whose name contains `query` (ASCII case-insensitive), in start order, at most
// `limit`; `name_of(group, item)` gives an event's name. Events without an item are skipped; an
// empty query finds nothing.
std::vector<TimelineModel::Ref> find_events(const TimelineModel& model, std::string_view query,
                                            const std::function<std::string_view(uint32_t, uint32_t)>& name_of,
                                            size_t limit = 100000);

// The event under time t (within `slop` time units), if any.
std::optional<uint32_t> pick_event(const TimelineTrack& track, double t, double slop);

// Statistics of an area selection: the events of `tracks` overlapping [t0, t1), their time
// inside the window summed per category, and the first `max_refs` of them.
struct AreaStats {
  uint64_t events = 0;
  double busy = 0;                                       // summed overlap with [t0, t1)
  std::vector<std::pair<uint64_t, double>> by_category;  // [category] = (events, time)
  std::vector<TimelineModel::Ref> refs;
};
AreaStats area_stats(const TimelineModel& model, std::span<const uint32_t> tracks, double t0, double t1,
                     size_t max_refs = 100000);

}  // namespace chakra
