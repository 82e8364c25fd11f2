#include "chakra/viz/timeline_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <queue>
#include <set>
#include <tuple>

#include "chakra/trace/graph.h"
#include "chakra/trace/schema.h"

namespace chakra {

std::optional<TimelineModel::Ref> TimelineModel::find(uint32_t group, uint32_t item) const {
  uint64_t key = uint64_t{group} << 32 | item;
  auto it = std::lower_bound(by_item_.begin(), by_item_.end(), key,
                             [](const auto& entry, uint64_t k) { return entry.first < k; });
  if (it == by_item_.end() || it->first != key) return std::nullopt;
  return it->second;
}

TimelineModel build_timeline(std::vector<TimelineEvent> events, std::string unit) {
  TimelineModel model;
  model.unit = std::move(unit);
  model.events = events.size();
  std::sort(events.begin(), events.end(), [](const TimelineEvent& a, const TimelineEvent& b) {
    if (a.group != b.group) return a.group < b.group;
    if (a.lane_class != b.lane_class) return a.lane_class < b.lane_class;
    if (a.start != b.start) return a.start < b.start;
    return a.end > b.end;  // the enclosing event first, so children stack under it
  });
  model.by_item_.reserve(events.size());
  if (!events.empty()) model.begin = UINT64_MAX;
  for (size_t first = 0; first < events.size();) {
    size_t last = first;
    while (last < events.size() && events[last].group == events[first].group &&
           events[last].lane_class == events[first].lane_class)
      ++last;
    // Interval partitioning: busy lanes by end time, free lanes by number.
    size_t track_base = model.tracks.size();
    std::priority_queue<std::pair<uint64_t, uint32_t>, std::vector<std::pair<uint64_t, uint32_t>>, std::greater<>> busy;
    std::set<uint32_t> free_lanes;
    for (size_t e = first; e < last; ++e) {
      const TimelineEvent& ev = events[e];
      while (!busy.empty() && busy.top().first <= ev.start) {
        free_lanes.insert(busy.top().second);
        busy.pop();
      }
      uint32_t lane;
      if (!free_lanes.empty()) {
        lane = *free_lanes.begin();
        free_lanes.erase(free_lanes.begin());
      } else {
        lane = static_cast<uint32_t>(model.tracks.size() - track_base);
        TimelineTrack& t = model.tracks.emplace_back();
        t.group = ev.group;
        t.lane_class = ev.lane_class;
        t.lane = lane;
      }
      busy.emplace(ev.end, lane);
      TimelineTrack& t = model.tracks[track_base + lane];
      model.by_item_.push_back({uint64_t{ev.group} << 32 | ev.item,
                                {static_cast<uint32_t>(track_base + lane), static_cast<uint32_t>(t.size())}});
      t.start.push_back(ev.start);
      t.end.push_back(ev.end);
      t.item.push_back(ev.item);
      t.category.push_back(ev.category);
      model.begin = std::min(model.begin, ev.start);
      model.end = std::max(model.end, ev.end);
    }
    first = last;
  }
  std::sort(model.by_item_.begin(), model.by_item_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return model;
}

std::string timeline_group_label(const TimelineModel& model, uint32_t group) {
  return (model.categories == TimelineCategories::SpanKind ? "npu " : "rank ") + std::to_string(group);
}

std::string timeline_track_label(const TimelineModel& model, const TimelineTrack& track) {
  std::string label = timeline_group_label(model, track.group);
  if (track.lane_class < model.lane_class_names.size() && !model.lane_class_names[track.lane_class].empty())
    label += " " + model.lane_class_names[track.lane_class];
  if (track.lane) label += " ." + std::to_string(track.lane);
  return label;
}

const char* timeline_activity_name(TimelineActivity a) {
  switch (a) {
    case TimelineActivity::CpuOp: return "CPU op";
    case TimelineActivity::Kernel: return "kernel";
    case TimelineActivity::Copy: return "memcpy / memset";
    case TimelineActivity::Communication: return "communication";
    case TimelineActivity::Other: return "other";
  }
  return "other";
}

TimelineModel timeline_of_traces(std::span<const Trace* const> ranks) {
  // Lane classes: (0, tid) for CPU threads before (1, stream) for GPU streams, numbered in that
  // order over all ranks so every rank lists its tracks alike; (-1, 0) for nodes that say neither.
  struct Placed {
    TimelineEvent event;
    std::pair<int, int64_t> lane;
  };
  std::vector<Placed> placed;
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    const Trace& t = *ranks[r];
    // Converters that keep durations but not start times write 0 for every start: such a rank
    // has no recorded timeline (stacking all its events at 0 would only mislead).
    bool has_starts = false;
    for (uint32_t n = 0; n < t.size() && !has_starts; ++n) has_starts = t.start_time_micros(n) > 0;
    if (!has_starts) continue;
    for (uint32_t n = 0; n < t.size(); ++n) {
      uint64_t dur = t.duration_micros(n);
      if (dur == 0) continue;
      uint64_t start = t.start_time_micros(n);
      const auto type = static_cast<NodeType>(t.type(n));
      const bool comm = type == NodeType::CommColl || type == NodeType::CommSend || type == NodeType::CommRecv;
      std::optional<bool> cpu;
      if (auto a = t.find_attr(n, "is_cpu_op")) cpu = a->as_bool();
      TimelineActivity kind = comm                     ? TimelineActivity::Communication
                              : type != NodeType::Comp ? TimelineActivity::Other
                              : cpu.value_or(false)    ? TimelineActivity::CpuOp
                                                       : TimelineActivity::Kernel;
      if (kind == TimelineActivity::Kernel)  // GPU work, by its name as the analyses class it
        switch (classify_gpu_op(t.name(n), t.type(n))) {
          case GpuKind::Communication: kind = TimelineActivity::Communication; break;
          case GpuKind::Memory: kind = TimelineActivity::Copy; break;
          case GpuKind::Computation: break;
        }
      std::pair<int, int64_t> lane{-1, 0};
      if (cpu) {
        auto id = t.find_attr(n, *cpu ? "tid" : "stream");
        lane = {*cpu ? 0 : 1, id ? id->as_int64().value_or(0) : 0};
      }
      placed.push_back({{r, 0, start, start + dur, n, static_cast<uint8_t>(kind)}, lane});
    }
  }
  std::vector<std::pair<int, int64_t>> lanes;
  for (const Placed& p : placed) lanes.push_back(p.lane);
  std::sort(lanes.begin(), lanes.end());
  lanes.erase(std::unique(lanes.begin(), lanes.end()), lanes.end());
  std::vector<TimelineEvent> events;
  events.reserve(placed.size());
  for (Placed& p : placed) {
    p.event.lane_class = static_cast<uint32_t>(std::lower_bound(lanes.begin(), lanes.end(), p.lane) - lanes.begin());
    events.push_back(p.event);
  }
  TimelineModel m = build_timeline(std::move(events), "us");
  for (const auto& [kind, id] : lanes)
    m.lane_class_names.push_back(kind < 0 ? "" : (kind == 0 ? "thread " : "stream ") + std::to_string(id));
  return m;
}

TimelineModel timeline_of_spans(std::span<const sim::Span> spans, std::span<const Trace* const> ranks) {
  std::vector<IdIndex> index;
  index.reserve(ranks.size());
  for (const Trace* t : ranks) index.emplace_back(*t);
  std::vector<TimelineEvent> events;
  events.reserve(spans.size());
  for (const sim::Span& s : spans) {
    uint32_t item = UINT32_MAX;
    if (s.npu < index.size())
      if (auto pos = index[s.npu].find(s.node)) item = *pos;
    bool comm = s.kind == sim::SpanKind::Collective || s.kind == sim::SpanKind::Send || s.kind == sim::SpanKind::Recv;
    events.push_back({s.npu, comm ? 1u : 0u, s.start, s.end, item, static_cast<uint8_t>(s.kind)});
  }
  TimelineModel m = build_timeline(std::move(events), "ns");
  m.categories = TimelineCategories::SpanKind;
  m.lane_class_names = {"", "comm"};
  return m;
}

namespace {
// Index of the first event ending after t (ends are sorted: events in a track are disjoint).
size_t first_ending_after(const TimelineTrack& track, double t) {
  return std::upper_bound(track.end.begin(), track.end.end(), t,
                          [](double v, uint64_t e) { return v < static_cast<double>(e); }) -
         track.end.begin();
}
}  // namespace

double round_step(double raw) {
  if (!(raw > 0) || !std::isfinite(raw)) return 1;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * power >= raw) return m * power;
  return 10 * power;
}

std::vector<double> axis_ticks(double origin, double t0, double t1, double step) {
  std::vector<double> ticks;
  if (!(step > 0) || !(t1 > t0)) return ticks;
  // Counted from the origin (k·step, not repeated additions) so labels stay exact far from it.
  for (double k = std::ceil((t0 - origin) / step); ticks.size() < 10000; ++k) {
    const double tick = origin + k * step;
    if (tick >= t1) break;
    if (tick >= t0) ticks.push_back(tick);
  }
  return ticks;
}

std::vector<double> busy_per_bin(const TimelineModel& model, size_t bins) {
  std::vector<double> busy(bins, 0.0);
  if (bins == 0 || model.end <= model.begin) return busy;
  const double begin = static_cast<double>(model.begin), width = static_cast<double>(model.end - model.begin) / bins;
  std::vector<double> running(bins + 1, 0.0);  // +1 from a bin on, -1 from a later one: bins fully covered
  auto bin_of = [&](double t) { return std::min(bins - 1, static_cast<size_t>(std::max(0.0, (t - begin) / width))); };
  for (const TimelineTrack& track : model.tracks)
    for (size_t i = 0; i < track.size(); ++i) {
      const double s = static_cast<double>(track.start[i]), e = static_cast<double>(track.end[i]);
      if (!(e > s)) continue;
      const size_t b0 = bin_of(s), b1 = bin_of(e);
      if (b0 == b1) {
        busy[b0] += e - s;
        continue;
      }
      busy[b0] += begin + (b0 + 1) * width - s;
      busy[b1] += e - (begin + b1 * width);
      running[b0 + 1] += 1;
      running[b1] -= 1;
    }
  double covering = 0;
  for (size_t b = 0; b < bins; ++b) {
    covering += running[b];
    busy[b] += covering * width;
  }
  return busy;
}

std::vector<TimelineModel::Ref> find_events(const TimelineModel& model, std::string_view query,
                                            const std::function<std::string_view(uint32_t, uint32_t)>& name_of,
                                            size_t limit) {
  std::vector<std::pair<uint64_t, TimelineModel::Ref>> found;  // (start, where)
  if (query.empty()) return {};
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  std::string needle(query);
  for (char& c : needle) c = lower(c);
  for (uint32_t t = 0; t < model.tracks.size(); ++t) {
    const TimelineTrack& track = model.tracks[t];
    for (uint32_t i = 0; i < track.size() && found.size() < limit; ++i) {
      if (track.item[i] == UINT32_MAX) continue;
      const std::string_view name = name_of(track.group, track.item[i]);
      auto hit = std::search(name.begin(), name.end(), needle.begin(), needle.end(),
                             [&](char a, char b) { return lower(a) == b; });
      if (hit != name.end()) found.push_back({track.start[i], {t, i}});
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<TimelineModel::Ref> out;
  out.reserve(found.size());
  for (const auto& f : found) out.push_back(f.second);
  return out;
}

std::pair<double, double> clamp_window(double t0, double t1, double begin, double end, double min_span) {
  const double whole = std::max(end - begin, min_span);
  const double lo = begin - kWindowMargin * whole, hi = begin + (1 + kWindowMargin) * whole;
  if (!std::isfinite(t0) || !std::isfinite(t1)) return {lo, hi};
  const double span = std::clamp(t1 - t0, min_span, hi - lo);
  t0 = std::clamp(t0, lo, hi - span);
  return {t0, t0 + span};
}

std::pair<double, double> focus_window(double start, double end, double whole) {
  const double length = std::max(end - start, whole * 1e-4);
  const double middle = (start + end) / 2;
  return {middle - 0.6 * length, middle + 0.6 * length};
}

void visible_rects(const TimelineTrack& track, double t0, double t1, double px_per_unit,
                   std::vector<TimelineRect>& out) {
  const size_t n = track.size();
  if (n == 0 || !(px_per_unit > 0) || !(t1 > t0)) return;
  auto px = [&](uint64_t t) { return (static_cast<double>(t) - t0) * px_per_unit; };
  auto wide = [&](size_t i) { return px(track.end[i]) - px(track.start[i]) >= 1.0; };
  size_t i = first_ending_after(track, t0);
  while (i < n && static_cast<double>(track.start[i]) < t1) {
    if (wide(i)) {
      out.push_back({px(track.start[i]), px(track.end[i]), static_cast<uint32_t>(i), 1, track.category[i]});
      ++i;
      continue;
    }
    size_t first = i;
    double x0 = px(track.start[i]), x1 = px(track.end[i]);
    for (;;) {
      // Events starting less than a pixel after the run's end join the run; only the last of
      // them can be wider than a pixel (the others end before it starts).
      double boundary = t0 + (x1 + 1.0) / px_per_unit;
      size_t j = std::lower_bound(track.start.begin() + i + 1, track.start.end(), boundary,
                                  [](uint64_t s, double b) { return static_cast<double>(s) < b; }) -
                 track.start.begin();
      if (j == i + 1) break;
      if (wide(j - 1)) {
        if (j - 2 > i) {
          i = j - 2;
          x1 = std::max(x1, px(track.end[i]));
        }
        break;
      }
      i = j - 1;
      x1 = std::max(x1, px(track.end[i]));
    }
    out.push_back({x0, x1, static_cast<uint32_t>(first), static_cast<uint32_t>(i - first + 1), track.category[first]});
    ++i;
  }
}

std::optional<uint32_t> pick_event(const TimelineTrack& track, double t, double slop) {
  size_t i = first_ending_after(track, t - slop);
  if (i < track.size() && static_cast<double>(track.start[i]) <= t + slop) return static_cast<uint32_t>(i);
  return std::nullopt;
}

AreaStats area_stats(const TimelineModel& model, std::span<const uint32_t> tracks, double t0, double t1,
                     size_t max_refs) {
  AreaStats stats;
  for (uint32_t ti : tracks) {
    if (ti >= model.tracks.size()) continue;
    const TimelineTrack& track = model.tracks[ti];
    size_t i = first_ending_after(track, t0);
    for (; i < track.size() && static_cast<double>(track.start[i]) < t1; ++i) {
      double overlap = std::min<double>(t1, track.end[i]) - std::max<double>(t0, track.start[i]);
      uint8_t c = track.category[i];
      if (stats.by_category.size() <= c) stats.by_category.resize(c + 1);
      ++stats.events;
      stats.busy += overlap;
      ++stats.by_category[c].first;
      stats.by_category[c].second += overlap;
      if (stats.refs.size() < max_refs) stats.refs.push_back({ti, static_cast<uint32_t>(i)});
    }
  }
  return stats;
}

}  // namespace chakra

namespace chakra {

std::optional<uint32_t> find_track(const TimelineModel& model, const TimelineTrackKey& key) {
  auto key_of = [](const TimelineTrack& t) { return std::tuple(t.group, t.lane_class, t.lane); };
  const auto wanted = std::tuple(key.group, key.lane_class, key.lane);
  auto it = std::lower_bound(model.tracks.begin(), model.tracks.end(), wanted,
                             [&](const TimelineTrack& t, const auto& k) { return key_of(t) < k; });
  if (it == model.tracks.end() || key_of(*it) != wanted) return std::nullopt;
  return static_cast<uint32_t>(it - model.tracks.begin());
}

TimelineRows timeline_rows(const TimelineModel& model, std::span<const TimelineTrackKey> pinned,
                           const std::function<bool(uint32_t group)>& collapsed) {
  TimelineRows out;
  for (const TimelineTrackKey& key : pinned)
    if (auto t = find_track(model, key)) out.pinned.push_back({key.group, *t, 1, false, false});
  const uint32_t n = static_cast<uint32_t>(model.tracks.size());
  out.row_of_track.resize(n);
  for (uint32_t first = 0; first < n;) {  // tracks are sorted by group: each group is a run
    const uint32_t group = model.tracks[first].group;
    uint32_t end = first;
    while (end < n && model.tracks[end].group == group) ++end;
    const uint32_t row = static_cast<uint32_t>(out.rows.size());
    if (collapsed(group)) {
      out.rows.push_back({group, first, end - first, true, true});
      for (uint32_t t = first; t < end; ++t) out.row_of_track[t] = row;
    } else {
      for (uint32_t t = first; t < end; ++t) {
        out.row_of_track[t] = static_cast<uint32_t>(out.rows.size());
        out.rows.push_back({group, t, 1, false, t == first});
      }
    }
    first = end;
  }
  return out;
}

std::vector<uint32_t> TimelineRows::tracks_of_rows(size_t first, size_t last) const {
  std::vector<uint32_t> tracks;
  if (rows.empty()) return tracks;
  last = std::min(last, rows.size() - 1);
  for (size_t r = first; r <= last; ++r)
    for (uint32_t k = 0; k < rows[r].tracks; ++k) tracks.push_back(rows[r].first_track + k);
  return tracks;
}

}  // namespace chakra
