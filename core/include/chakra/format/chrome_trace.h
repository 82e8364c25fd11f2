// Chrome trace event format ("JSON Object Format"), which Perfetto UI and chrome://tracing
// open: complete events ("X") on tracks (pid = NPU, tid = track), names for processes and
// threads ("M"), and flow arrows ("s"/"f") for dependencies. Timestamps and durations are in
// microseconds, as the format defines. Written as a stream through JsonWriter with Python's
// json.dump separators, so the layout can match files written by Python tools.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "chakra/format/io.h"
#include "chakra/format/json_writer.h"

namespace chakra {

class ChromeTraceWriter {
 public:
  // Raw JSON members written before "traceEvents" (e.g. {"meta_user", "\"aras\""}).
  using Members = std::vector<std::pair<std::string_view, std::string_view>>;
  using Args = std::function<void(JsonWriter&)>;  // writes key/value pairs inside "args"

  ChromeTraceWriter(ByteSink& out, const Members& leading = {});

  void process_name(int64_t pid, std::string_view name);
  void thread_name(int64_t pid, int64_t tid, std::string_view name);
  // Sort order of a process / thread in the UI (Perfetto honours these).
  void process_sort_index(int64_t pid, int64_t index);
  void thread_sort_index(int64_t pid, int64_t tid, int64_t index);
  // A slice [ts, ts + dur) on track (pid, tid). Members in the order pid, tid, ts, dur, ph,
  // name[, cat][, args].
  void complete(int64_t pid, int64_t tid, double ts_us, double dur_us, std::string_view name,
                std::string_view category = {}, const Args& args = nullptr);
  // An arrow from the slice enclosing (from_pid, from_tid, from_ts) to the one starting at
  // (to_pid, to_tid, to_ts); `id` must be unique per arrow.
  void flow(uint64_t id, std::string_view name, int64_t from_pid, int64_t from_tid, double from_ts_us, int64_t to_pid,
            int64_t to_tid, double to_ts_us);
  // Closes "traceEvents", writes `trailing` members and closes the document.
  void finish(const Members& trailing = {});

 private:
  void metadata(std::string_view what, int64_t pid, const int64_t* tid, std::string_view key, const Args& value);
  JsonWriter w_;
};

}  // namespace chakra
