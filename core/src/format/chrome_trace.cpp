#include "chakra/format/chrome_trace.h"

namespace chakra {

ChromeTraceWriter::ChromeTraceWriter(ByteSink& out, const Members& leading) : w_(out, JsonStyle{0, true, ", ", ": "}) {
  w_.begin_object();
  for (const auto& [key, value] : leading) w_.key(key).value_raw(value);
  w_.key("traceEvents").begin_array();
}

void ChromeTraceWriter::metadata(std::string_view what, int64_t pid, const int64_t* tid, std::string_view key,
                                 const Args& value) {
  w_.begin_object();
  w_.key("name").value(what).key("ph").value("M").key("pid").value_int(pid);
  if (tid) w_.key("tid").value_int(*tid);
  w_.key("args").begin_object();
  w_.key(key);
  value(w_);
  w_.end_object().end_object();
}

void ChromeTraceWriter::process_name(int64_t pid, std::string_view name) {
  metadata("process_name", pid, nullptr, "name", [&](JsonWriter& w) { w.value(name); });
}

void ChromeTraceWriter::thread_name(int64_t pid, int64_t tid, std::string_view name) {
  metadata("thread_name", pid, &tid, "name", [&](JsonWriter& w) { w.value(name); });
}

void ChromeTraceWriter::process_sort_index(int64_t pid, int64_t index) {
  metadata("process_sort_index", pid, nullptr, "sort_index", [&](JsonWriter& w) { w.value_int(index); });
}

void ChromeTraceWriter::thread_sort_index(int64_t pid, int64_t tid, int64_t index) {
  metadata("thread_sort_index", pid, &tid, "sort_index", [&](JsonWriter& w) { w.value_int(index); });
}

void ChromeTraceWriter::complete(int64_t pid, int64_t tid, double ts_us, double dur_us, std::string_view name,
                                 std::string_view category, const Args& args) {
  w_.begin_object();
  w_.key("pid").value_int(pid).key("tid").value_int(tid);
  w_.key("ts").value_double(ts_us).key("dur").value_double(dur_us);
  w_.key("ph").value("X").key("name").value(name);
  if (!category.empty()) w_.key("cat").value(category);
  if (args) {
    w_.key("args").begin_object();
    args(w_);
    w_.end_object();
  }
  w_.end_object();
}

void ChromeTraceWriter::flow(uint64_t id, std::string_view name, int64_t from_pid, int64_t from_tid, double from_ts_us,
                             int64_t to_pid, int64_t to_tid, double to_ts_us) {
  // "s" binds to the enclosing slice; "f" with "bp": "e" to the slice that starts there.
  w_.begin_object();
  w_.key("pid").value_int(from_pid).key("tid").value_int(from_tid).key("ts").value_double(from_ts_us);
  w_.key("ph").value("s").key("id").value_uint(id).key("name").value(name).key("cat").value("dependency");
  w_.end_object();
  w_.begin_object();
  w_.key("pid").value_int(to_pid).key("tid").value_int(to_tid).key("ts").value_double(to_ts_us);
  w_.key("ph").value("f").key("bp").value("e").key("id").value_uint(id).key("name").value(name);
  w_.key("cat").value("dependency");
  w_.end_object();
}

void ChromeTraceWriter::finish(const Members& trailing) {
  w_.end_array();
  for (const auto& [key, value] : trailing) w_.key(key).value_raw(value);
  w_.end_object();
  w_.flush();
}

}  // namespace chakra
