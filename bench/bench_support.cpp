#include "bench_support.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <cstdio>
#include <sstream>

#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/support/error.h"

namespace bench {

namespace {

// Runs argv in cwd from this process: fork, exec, wait.
ChildRun fork_exec_wait(const std::vector<std::string>& argv, const std::string& cwd) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(nullptr);  // or the child would write what this process has buffered again
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(126);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  ChildRun r;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.user_s = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6;
  r.cpu_s = r.user_s + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
  r.max_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// The spawner: a copy of this process made at start-up, while it is small, that runs children
// on request over two pipes. Linux counts the pages of the process that forks into a child's
// peak RSS (ru_maxrss keeps the high-water mark of the address space that exec replaces), so
// children forked by the benchmark itself, after it has built inputs, would report its memory.
int to_spawner = -1, from_spawner = -1;

bool read_all_bytes(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t got = read(fd, p, n);
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool write_all_bytes(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t put = write(fd, p, n);
    if (put <= 0) return false;
    p += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

void send_string(int fd, const std::string& s) {
  const uint32_t n = static_cast<uint32_t>(s.size());
  if (!write_all_bytes(fd, &n, sizeof n) || !write_all_bytes(fd, s.data(), n))
    throw chakra::Error("spawner: pipe closed");
}

bool receive_string(int fd, std::string& s) {
  uint32_t n;
  if (!read_all_bytes(fd, &n, sizeof n)) return false;
  s.resize(n);
  return read_all_bytes(fd, s.data(), n);
}

[[noreturn]] void serve(int requests, int replies) {
  std::vector<std::string> argv;
  std::string cwd;
  uint32_t count;
  while (read_all_bytes(requests, &count, sizeof count)) {
    argv.resize(count);
    for (std::string& a : argv)
      if (!receive_string(requests, a)) _exit(0);
    if (!receive_string(requests, cwd)) _exit(0);
    const ChildRun r = fork_exec_wait(argv, cwd);
    if (!write_all_bytes(replies, &r, sizeof r)) _exit(0);
  }
  _exit(0);
}

}  // namespace

void start_spawner() {
  int requests[2], replies[2];
  if (to_spawner >= 0 || pipe(requests) != 0 || pipe(replies) != 0) return;
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    close(requests[1]);
    close(replies[0]);
    serve(requests[0], replies[1]);
  }
  close(requests[0]);
  close(replies[1]);
  if (pid < 0) {
    close(requests[1]);
    close(replies[0]);
    return;
  }
  to_spawner = requests[1];
  from_spawner = replies[0];
}

ChildRun run_child(const std::vector<std::string>& argv, const std::string& cwd) {
  if (to_spawner < 0) return fork_exec_wait(argv, cwd);
  const uint32_t count = static_cast<uint32_t>(argv.size());
  if (!write_all_bytes(to_spawner, &count, sizeof count)) throw chakra::Error("spawner: pipe closed");
  for (const std::string& a : argv) send_string(to_spawner, a);
  send_string(to_spawner, cwd);
  ChildRun r;
  if (!read_all_bytes(from_spawner, &r, sizeof r)) throw chakra::Error("spawner: no reply");
  return r;
}

double reference_timing(const std::string& label, int column) {
  std::ifstream in(std::string(CHAKRA_SHARED_DIR) + "/reference/chakra/timings.tsv");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string field;
    std::getline(fields, field, '\t');
    if (field != label) continue;
    for (int c = 0; c < column; ++c) std::getline(fields, field, '\t');
    return std::stod(field);
  }
  return 0;
}

chakra::Trace replicate(const std::string& input, int copies) {
  chakra::Trace out;
  std::vector<chakra::NodeDraft> nodes;
  {
    chakra::EtReader reader(chakra::open_input(input));
    reader.read_metadata(out);
    chakra::NodeDraft d;
    while (reader.next_node(out, d)) nodes.push_back(d);
  }
  uint64_t span = 0;
  for (const auto& d : nodes) span = std::max(span, d.id + 1);
  out.reserve(nodes.size() * copies);
  chakra::NodeDraft shifted;
  for (int c = 0; c < copies; ++c) {
    const uint64_t offset = span * static_cast<uint64_t>(c);
    for (const auto& d : nodes) {
      shifted = d;
      shifted.id += offset;
      for (auto& dep : shifted.ctrl_deps) dep += offset;
      for (auto& dep : shifted.data_deps) dep += offset;
      out.append(shifted);
    }
  }
  return out;
}

namespace {
// Runs `make` in a child process (so JSON trees never count in the benchmark's memory: a
// forked child starts with its parent's resident pages) and returns the number it returns;
// throws naming `what` when it fails.
template <class F>
uint64_t in_child(const std::string& what, F&& make) {
  int fds[2];
  if (pipe(fds) != 0) throw chakra::Error("could not write " + what + ": no pipe");
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    try {
      uint64_t n = make();
      if (write(fds[1], &n, sizeof n) != sizeof n) _exit(1);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      _exit(1);
    }
    _exit(0);
  }
  close(fds[1]);
  uint64_t n = 0;
  bool got = read(fds[0], &n, sizeof n) == sizeof n;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) throw chakra::Error("could not write " + what);
  return n;
}
}  // namespace

void write_replicated_linked_json(const std::string& input, int copies, const std::string& path) {
  in_child(path, [&] {
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(chakra::read_file(input));
    auto& nodes = doc["nodes"];
    int64_t span = 0;
    for (const auto& n : nodes) span = std::max(span, n["id"].get<int64_t>() + 1);
    const size_t original = nodes.size();
    for (int c = 1; c < copies; ++c)
      for (size_t i = 0; i < original; ++i) {
        nlohmann::ordered_json n = nodes[i];
        n["id"] = n["id"].get<int64_t>() + c * span;
        if (n["ctrl_deps"].is_number()) n["ctrl_deps"] = n["ctrl_deps"].get<int64_t>() + c * span;
        if (n.contains("inter_thread_dep") && n["inter_thread_dep"].is_number())
          n["inter_thread_dep"] = n["inter_thread_dep"].get<int64_t>() + c * span;
        nodes.push_back(std::move(n));
      }
    chakra::OutputFile out(path);
    out.write(doc.dump(4));
    out.commit();
    return uint64_t(nodes.size());
  });
}

uint64_t write_replicated_link_inputs(const std::string& host_in, const std::string& kineto_in, int copies,
                                      const std::string& host_out, const std::string& kineto_out) {
  return in_child(host_out, [&] {
    nlohmann::ordered_json host = nlohmann::ordered_json::parse(chakra::read_file(host_in));
    nlohmann::ordered_json kineto = nlohmann::ordered_json::parse(chakra::read_file(kineto_in));
    auto& nodes = host["nodes"];
    auto& events = kineto["traceEvents"];
    int64_t id_span = 0, rf_span = 0, ext_span = 0, corr_span = 0;
    double t_min = 1e300, t_max = 0;
    for (const auto& n : nodes) {
      id_span = std::max(id_span, n["id"].get<int64_t>() + 1);
      for (const auto& a : n["attrs"])
        if (a["name"] == "rf_id") rf_span = std::max(rf_span, a["value"].get<int64_t>() + 1);
    }
    for (const auto& e : events) {
      if (!e.contains("ts")) continue;
      t_min = std::min(t_min, e["ts"].get<double>());
      t_max = std::max(t_max, e["ts"].get<double>() + e.value("dur", 0.0));
      if (!e.contains("args")) continue;
      ext_span = std::max(ext_span, e["args"].value("External id", int64_t{0}) + 1);
      corr_span = std::max(corr_span, e["args"].value("correlation", int64_t{0}) + 1);
    }
    const int64_t t_span = static_cast<int64_t>(t_max - t_min) + 1000;
    const size_t host_nodes = nodes.size(), kineto_events = events.size();
    for (int c = 1; c < copies; ++c) {
      for (size_t i = 0; i < host_nodes; ++i) {
        nlohmann::ordered_json n = nodes[i];
        // One process root for all copies: the reference links only what hangs under node 1.
        if (n["id"] == 1) continue;
        n["id"] = n["id"].get<int64_t>() + c * id_span;
        if (n["ctrl_deps"] != 1) n["ctrl_deps"] = n["ctrl_deps"].get<int64_t>() + c * id_span;
        for (auto& a : n["attrs"])
          if (a["name"] == "rf_id") a["value"] = a["value"].get<int64_t>() + c * rf_span;
        nodes.push_back(std::move(n));
      }
      for (size_t i = 0; i < kineto_events; ++i) {
        nlohmann::ordered_json e = events[i];
        if (!e.contains("ts") || !e.contains("args")) continue;
        if (e["ts"].is_number_float())
          e["ts"] = e["ts"].get<double>() + static_cast<double>(c * t_span);
        else
          e["ts"] = e["ts"].get<int64_t>() + c * t_span;
        auto& a = e["args"];
        if (a.contains("External id")) a["External id"] = a["External id"].get<int64_t>() + c * ext_span;
        if (a.contains("Record function id"))
          a["Record function id"] = a["Record function id"].get<int64_t>() + c * rf_span;
        if (a.contains("correlation")) a["correlation"] = a["correlation"].get<int64_t>() + c * corr_span;
        events.push_back(std::move(e));
      }
    }
    for (auto [doc, path] : {std::pair{&host, host_out}, std::pair{&kineto, kineto_out}}) {
      chakra::OutputFile out(path);
      out.write(doc->dump());
      out.commit();
    }
    return uint64_t(events.size());
  });
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "unknown CPU";
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace bench

namespace bench {

uint64_t write_replicated_kineto(const std::string& input, uint64_t min_bytes, uint32_t rank, const std::string& path) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(chakra::read_file(input));
  const nlohmann::ordered_json events = std::move(doc["traceEvents"]);
  doc.erase("traceEvents");
  if (doc.contains("distributedInfo")) doc["distributedInfo"]["rank"] = rank;
  // Each copy shifts times past the previous copy's end and ids past the largest: one template
  // per event with the shifted numbers cut out, filled in per copy.
  int64_t t_min = INT64_MAX, t_max = 0, id_span = 0;
  for (const auto& e : events) {
    if (!e.contains("ts")) continue;
    t_min = std::min(t_min, e["ts"].get<int64_t>());
    t_max = std::max(t_max, e["ts"].get<int64_t>() + e.value("dur", int64_t{0}));
    if (e.contains("id") && e["id"].is_number_integer()) id_span = std::max(id_span, e["id"].get<int64_t>() + 1);
    if (!e.contains("args")) continue;
    for (const char* k : {"External id", "correlation", "Record function id"})
      if (e["args"].contains(k)) id_span = std::max(id_span, e["args"][k].get<int64_t>() + 1);
  }
  const int64_t t_span = t_max - t_min + 1000;
  struct Template {
    std::vector<std::string> text;                     // text[0] n0 text[1] n1 ... text[k]
    std::vector<std::pair<int64_t, int64_t>> numbers;  // (value, shift per copy)
    bool timed = false;                                // metadata events (no "ts") are written once
  };
  std::vector<Template> templates;
  for (const auto& e : events) {
    nlohmann::ordered_json t = e;
    Template tp;
    auto cut = [&](nlohmann::ordered_json& v, int64_t shift) {
      if (!v.is_number_integer()) return;
      tp.numbers.push_back({v.get<int64_t>(), shift});
      v = "@@" + std::to_string(tp.numbers.size() - 1) + "@@";
    };
    tp.timed = t.contains("ts");
    if (tp.timed) cut(t["ts"], t_span);
    if (t.contains("id")) cut(t["id"], id_span);
    if (t.contains("args"))
      for (const char* k : {"External id", "correlation", "Record function id"})
        if (t["args"].contains(k)) cut(t["args"][k], id_span);
    const std::string s = t.dump();
    // The marks in the order they appear in the text, their numbers in that order too.
    std::vector<std::pair<size_t, size_t>> marks;  // (position, number)
    for (size_t i = 0; i < tp.numbers.size(); ++i) marks.push_back({s.find("\"@@" + std::to_string(i) + "@@\""), i});
    std::sort(marks.begin(), marks.end());
    std::vector<std::pair<int64_t, int64_t>> in_order;
    size_t at = 0;
    for (const auto& [pos, i] : marks) {
      tp.text.push_back(s.substr(at, pos - at));
      at = pos + ("\"@@" + std::to_string(i) + "@@\"").size();
      in_order.push_back(tp.numbers[i]);
    }
    tp.text.push_back(s.substr(at));
    tp.numbers = std::move(in_order);
    templates.push_back(std::move(tp));
  }
  std::string head = doc.dump();
  head.pop_back();  // the closing brace: traceEvents follow
  chakra::OutputFile out(path);
  out.write(head + (doc.empty() ? "" : ",") + "\"traceEvents\":[");
  uint64_t bytes = head.size(), written = 0;
  std::string buf;
  for (int64_t c = 0; bytes < min_bytes || c == 0; ++c) {
    buf.clear();
    for (const Template& tp : templates) {
      if (c > 0 && !tp.timed) continue;
      if (written++) buf += ',';
      for (size_t i = 0; i < tp.numbers.size(); ++i)
        buf += tp.text[i], buf += std::to_string(tp.numbers[i].first + c * tp.numbers[i].second);
      buf += tp.text.back();
    }
    out.write(buf);
    bytes += buf.size();
  }
  out.write(std::string("]}"));
  out.commit();
  return bytes + 2;
}

}  // namespace bench
