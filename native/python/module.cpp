// chakrakit._core: the Python module's native part (core/docs/python.md). Two things only:
// - read(): a trace loaded into the core's columnar store, handed to Python as numpy arrays
//   (one per column, strings as category codes), never as per-node Python objects;
// - run(): the chakra binary installed with the module run as a child process, so every other
//   function of the module is the CLI itself with its checks and messages; a crash in it cannot
//   take a notebook's kernel down, Ctrl-C stops it the way it stops the CLI (outputs not left
//   half-written), its progress reaches Python through a pipe, and the GIL is free meanwhile.
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "chakra/format/et_io.h"
#include "chakra/format/et_json.h"
#include "chakra/support/error.h"
#include "chakra/trace/schema.h"
#include "chakra/trace/trace.h"
#include "cli.h"

namespace py = pybind11;

namespace {

// ---- run: a command in a child process ------------------------------------------------------

struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw chakra::Error(std::string("pipe: ") + std::strerror(errno));
    read = fds[0];
    write = fds[1];
  }
};

// A command started in a child process: its pid and the read ends of its stdout, stderr and
// progress pipes.
struct Child {
  pid_t pid;
  int out, err, progress;
};

// Starts PROGRAM ARGS... (the chakra binary) with its stdout and stderr on pipes and its progress
// reports on a third one (CHAKRA_PROGRESS_FD=3, cli.h); SIGINT as the terminal's Ctrl-C.
Child start(const std::string& program, const std::vector<std::string>& args) {
  if (args.empty()) throw py::value_error("no command");
  Pipe out, err, prog;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, prog.write, 3);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> argv_strings = {program};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = {"CHAKRA_PROGRESS_FD=3"};
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "CHAKRA_PROGRESS_FD=", 19) != 0) env_strings.emplace_back(*e);
  std::vector<char*> env;
  for (std::string& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  pid_t pid = -1;
  const int failed = posix_spawn(&pid, program.c_str(), &actions, &attributes, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  for (int fd : {out.write, err.write, prog.write}) ::close(fd);
  if (failed) {
    for (int fd : {out.read, err.read, prog.read}) ::close(fd);
    throw chakra::Error(program + ": cannot run it: " + std::strerror(failed));
  }
  return {pid, out.read, err.read, prog.read};
}

// Reads what is there on `fd` into `into`; false at end of file.
bool drain(int fd, std::string& into) {
  char buf[65536];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n > 0) into.append(buf, static_cast<size_t>(n));
  return n > 0 || (n < 0 && errno == EINTR);
}

// Starts PROGRAM ARGS... and returns (pid, stdout fd, stderr fd) without waiting: a command that
// runs until stopped (chakra view), which the caller ends with SIGINT and reaps with waitpid.
py::tuple spawn(const std::string& program, const std::vector<std::string>& args) {
  const Child child = start(program, args);
  ::close(child.progress);
  return py::make_tuple(child.pid, child.out, child.err);
}

// Runs PROGRAM ARGS... (the chakra binary; args[0] is the command) and returns (exit code, or 128 +
// the signal that killed it; stdout; stderr), as bytes. `progress(stage, done, total)` is called
// with the command's progress reports. A KeyboardInterrupt
// (Ctrl-C, or an exception `progress` raises) asks the command to stop as Ctrl-C asks the CLI (a
// second one kills it), waits for it and is raised.
py::tuple run(const std::string& program, const std::vector<std::string>& args, py::object progress) {
  const Child child = start(program, args);
  const pid_t pid = child.pid;
  std::string stdout_text, stderr_text, progress_text;
  pollfd fds[3] = {{child.out, POLLIN, 0}, {child.err, POLLIN, 0}, {child.progress, POLLIN, 0}};
  std::string* into[3] = {&stdout_text, &stderr_text, &progress_text};
  std::optional<py::error_already_set> pending;  // what stopped the command, raised once it ended
  int open = 3;
  while (open > 0) {
    {
      py::gil_scoped_release unlocked;
      ::poll(fds, 3, 100);
    }
    for (int i = 0; i < 3; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (!drain(fds[i].fd, *into[i])) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
    try {
      for (size_t nl; (nl = progress_text.find('\n')) != std::string::npos; progress_text.erase(0, nl + 1)) {
        const std::string line = progress_text.substr(0, nl);
        const size_t t1 = line.find('\t'), t2 = line.rfind('\t');
        if (!progress.is_none() && t1 != t2)
          progress(line.substr(0, t1), std::stoull(line.substr(t1 + 1, t2 - t1 - 1)), std::stoull(line.substr(t2 + 1)));
      }
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    } catch (py::error_already_set& e) {
      ::kill(pid, pending ? SIGKILL : SIGINT);
      if (!pending) pending = std::move(e);
      progress_text.clear();
    }
  }
  int status = 0;
  {
    py::gil_scoped_release unlocked;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  }
  if (pending) {
    pending->restore();
    throw py::error_already_set();
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return py::make_tuple(code, py::bytes(stdout_text), py::bytes(stderr_text));
}

// ---- read: a trace's columns ----------------------------------------------------------------

template <class T>
py::array_t<T> array(size_t n) {
  return py::array_t<T>(static_cast<py::ssize_t>(n));
}

// Strings of a trace as categories: the codes of `ids` in order of first use, and those strings.
struct Categories {
  std::vector<int32_t> code_of;  // by StrId; -1: not yet used
  py::list names;
  explicit Categories(size_t pool_size) : code_of(pool_size, -1) {}
  int32_t code(const chakra::Trace& t, chakra::StrId id) {
    if (code_of[id] < 0) {
      code_of[id] = static_cast<int32_t>(names.size());
      const std::string_view s = t.str(id);
      names.append(py::str(s.data(), s.size()));
    }
    return code_of[id];
  }
};

// A trace the module read, with its columns handed out as numpy arrays.
class PyTrace {
 public:
  PyTrace(chakra::Trace trace, std::string path) : trace_(std::move(trace)), path_(std::move(path)) {}

  size_t size() const { return trace_.size(); }
  const std::string& path() const { return path_; }

  // id, name (codes + names), type, start and duration (µs), counts of dependencies and attributes.
  py::dict nodes() const {
    const size_t n = trace_.size();
    auto id = array<uint64_t>(n), start = array<uint64_t>(n), duration = array<uint64_t>(n);
    auto type = array<int32_t>(n), name = array<int32_t>(n);
    auto data_deps = array<uint32_t>(n), ctrl_deps = array<uint32_t>(n);
    Categories names(trace_.strings().size());
    auto i_id = id.mutable_unchecked<1>(), i_start = start.mutable_unchecked<1>();
    auto i_duration = duration.mutable_unchecked<1>();
    auto i_type = type.mutable_unchecked<1>(), i_name = name.mutable_unchecked<1>();
    auto i_data = data_deps.mutable_unchecked<1>(), i_ctrl = ctrl_deps.mutable_unchecked<1>();
    for (uint32_t k = 0; k < n; ++k) {
      i_id(k) = trace_.id(k);
      i_name(k) = names.code(trace_, trace_.name_id(k));
      i_type(k) = trace_.type(k);
      i_start(k) = trace_.start_time_micros(k);
      i_duration(k) = trace_.duration_micros(k);
      i_data(k) = static_cast<uint32_t>(trace_.data_deps(k).size());
      i_ctrl(k) = static_cast<uint32_t>(trace_.ctrl_deps(k).size());
    }
    py::list type_names;
    for (int32_t t = 0; t < chakra::kNodeTypeCount; ++t) type_names.append(std::string(chakra::node_type_name(t)));
    py::dict d;
    d["id"] = id;
    d["name"] = name;
    d["names"] = names.names;
    d["type"] = type;
    d["type_names"] = type_names;
    d["start_time_micros"] = start;
    d["duration_micros"] = duration;
    d["data_deps"] = data_deps;
    d["ctrl_deps"] = ctrl_deps;
    return d;
  }

  // One row per dependency: the node (id) that depends, the id it depends on, data (1) or control (2).
  py::dict dependencies() const {
    size_t total = 0;
    for (uint32_t k = 0; k < trace_.size(); ++k) total += trace_.data_deps(k).size() + trace_.ctrl_deps(k).size();
    auto node = array<uint64_t>(total), on = array<uint64_t>(total);
    auto kind = array<uint8_t>(total);
    auto i_node = node.mutable_unchecked<1>(), i_on = on.mutable_unchecked<1>();
    auto i_kind = kind.mutable_unchecked<1>();
    size_t row = 0;
    for (uint32_t k = 0; k < trace_.size(); ++k) {
      for (uint64_t dep : trace_.data_deps(k)) i_node(row) = trace_.id(k), i_on(row) = dep, i_kind(row++) = 1;
      for (uint64_t dep : trace_.ctrl_deps(k)) i_node(row) = trace_.id(k), i_on(row) = dep, i_kind(row++) = 2;
    }
    py::dict d;
    d["node"] = node;
    d["depends_on"] = on;
    d["kind"] = kind;
    return d;
  }

  // One row per node attribute: the node's id, the attribute's name and kind, and its value in the
  // column of its kind (integers and bools; floating; text and lists as text).
  py::dict attributes() const {
    const chakra::AttrTable& attrs = trace_.node_attrs();
    const size_t total = attrs.size();
    auto node = array<uint64_t>(total);
    auto ints = array<int64_t>(total);
    auto has_int = array<bool>(total);
    auto floats = array<double>(total);
    auto name = array<int32_t>(total), kind = array<int32_t>(total), text = array<int32_t>(total);
    auto i_node = node.mutable_unchecked<1>();
    auto i_ints = ints.mutable_unchecked<1>();
    auto i_has = has_int.mutable_unchecked<1>();
    auto i_floats = floats.mutable_unchecked<1>();
    auto i_name = name.mutable_unchecked<1>(), i_kind = kind.mutable_unchecked<1>(),
         i_text = text.mutable_unchecked<1>();
    Categories names(trace_.strings().size()), texts(trace_.strings().size());
    std::vector<std::string> pending_lists;  // lists, written out: coded once every string's code is known
    for (uint32_t k = 0; k < trace_.size(); ++k) {
      for (uint32_t a = trace_.attr_begin(k); a < trace_.attr_end(k); ++a) {
        const chakra::AttrView v = trace_.attr(a);
        i_node(a) = trace_.id(k);
        i_name(a) = names.code(trace_, attrs.name(a));
        i_kind(a) = static_cast<int32_t>(v.kind());
        const std::optional<int64_t> as_int = chakra::is_floating(v.kind()) ? std::nullopt : v.as_int64();
        i_has(a) = as_int.has_value();
        i_ints(a) = as_int.value_or(0);
        i_floats(a) = chakra::is_floating(v.kind()) ? *v.as_double() : as_int ? static_cast<double>(*as_int) : NAN;
        i_text(a) = -1;
        if (chakra::is_text(v.kind())) {
          i_text(a) = texts.code(trace_, static_cast<chakra::StrId>(v.bits()));
        } else if (chakra::is_list(v.kind())) {
          i_text(a) = -2 - static_cast<int32_t>(pending_lists.size());
          pending_lists.push_back(list_text(v));
        }
      }
    }
    // Lists' texts after the strings (categories are unique: a text equal to a string, or to another
    // list's, shares its code).
    std::unordered_map<std::string, int32_t> list_code;
    for (size_t a = 0; a < total; ++a) {
      if (i_text(a) > -2) continue;
      const std::string& text = pending_lists[static_cast<size_t>(-2 - i_text(a))];
      chakra::StrId id;
      if (trace_.strings().find(text, &id) && texts.code_of[id] >= 0) {
        i_text(a) = texts.code_of[id];
        continue;
      }
      auto [it, fresh] = list_code.emplace(text, static_cast<int32_t>(texts.names.size()));
      if (fresh) texts.names.append(py::str(text));
      i_text(a) = it->second;
    }
    py::list kind_names;
    for (int k = 0; k <= chakra::kMaxAttrKind; ++k) {  // 1 and 2 are no kind: named so, categories are unique
      const std::string_view name = chakra::attr_kind_proto_name(static_cast<chakra::AttrKind>(k));
      kind_names.append(k == 0 ? std::string("none") : name.empty() ? "field " + std::to_string(k) : std::string(name));
    }
    py::dict d;
    d["node"] = node;
    d["name"] = name;
    d["names"] = names.names;
    d["kind"] = kind;
    d["kind_names"] = kind_names;
    d["int"] = ints;
    d["has_int"] = has_int;
    d["float"] = floats;
    d["text"] = text;
    d["texts"] = texts.names;
    return d;
  }

  // The GlobalMetadata's attributes as Python values.
  py::dict metadata() const {
    py::dict d;
    const chakra::AttrTable& attrs = trace_.metadata_attrs();
    for (uint32_t a = 0; a < attrs.size(); ++a) {
      const chakra::AttrView v = trace_.metadata_attr(a);
      const std::string key(v.name());
      if (chakra::is_text(v.kind()))
        d[key.c_str()] = std::string(*v.as_string());
      else if (chakra::is_floating(v.kind()))
        d[key.c_str()] = *v.as_double();
      else if (v.kind() == chakra::AttrKind::Bool)
        d[key.c_str()] = *v.as_bool();
      else if (auto i = v.as_int64())
        d[key.c_str()] = *i;
      else
        d[key.c_str()] = list_text(v);
    }
    if (!trace_.metadata_version().empty()) d["version"] = std::string(trace_.metadata_version());
    return d;
  }

 private:
  std::string list_text(const chakra::AttrView& v) const {
    std::string s = "[";
    const chakra::AttrKind e = chakra::element_kind(v.kind());
    for (uint64_t bits : v.list()) {
      if (s.size() > 1) s += ", ";
      if (chakra::is_text(e))
        s += std::string(trace_.str(static_cast<chakra::StrId>(bits)));
      else if (e == chakra::AttrKind::Double)
        s += std::to_string(chakra::double_of_bits(bits));
      else if (e == chakra::AttrKind::Float)
        s += std::to_string(chakra::float_of_bits(bits));
      else if (chakra::is_unsigned(e))
        s += std::to_string(bits);
      else
        s += std::to_string(static_cast<int64_t>(bits));
    }
    return s + "]";
  }

  chakra::Trace trace_;
  std::string path_;
};

// Stops a read when Python has a signal to handle (Ctrl-C) or `progress` raised.
class PythonProgress : public chakra::Progress {
 public:
  explicit PythonProgress(py::object progress) : progress_(std::move(progress)) {}
  bool report(std::string_view stage, uint64_t done, uint64_t total) override {  // every 8 MiB read
    py::gil_scoped_acquire locked;
    try {
      if (!progress_.is_none()) progress_(std::string(stage), done, total);
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    } catch (py::error_already_set& e) {
      error_ = std::move(e);
      return false;
    }
    return true;
  }
  std::optional<py::error_already_set> error_;

 private:
  py::object progress_;
};

// Reads a Chakra trace (.et, .et.gz, or Chakra JSON as chakra jsonize writes it).
PyTrace read_trace(const std::string& path, const std::string& metadata, uint64_t max_nodes, py::object progress) {
  chakra::ReadOptions options;
  if (metadata == "present")
    options.metadata = chakra::MetadataMode::Present;
  else if (metadata == "absent")
    options.metadata = chakra::MetadataMode::Absent;
  else if (metadata != "auto")
    throw py::value_error("metadata must be 'auto', 'present' or 'absent', not '" + metadata + "'");
  options.max_nodes = max_nodes;
  PythonProgress reporter(std::move(progress));
  options.progress = &reporter;
  cli::require_chakra_et(path,
                         "chakrakit.read reads Chakra .et traces: chakrakit.link and convert make them from a "
                         "PyTorch run; chakrakit.analyze reads Kineto traces as they are");
  // The heap on huge pages for the read, as chakra has it for commands that build traces (half of
  // a read's time went to first touches of small pages); glibc's thresholds back after.
  struct HugePageHeap {
    HugePageHeap() { cli::back_heap_with_huge_pages(); }
    ~HugePageHeap() { cli::default_heap_thresholds(); }
  } heap;
  try {
    py::gil_scoped_release unlocked;
    return PyTrace(chakra::read_et(path, options), path);
  } catch (const chakra::Cancelled&) {
    if (reporter.error_) reporter.error_->restore();
    throw py::error_already_set();
  }
}

// The traces a path names, as the per-trace commands take them (cli::trace_files): a file, or a
// folder's .et and .et.gz files in rank order; each with the rank its name holds (None if none).
std::vector<std::pair<std::string, std::optional<uint32_t>>> trace_files(const std::string& path) {
  std::vector<std::pair<std::string, std::optional<uint32_t>>> out;
  for (const std::string& file : cli::trace_files({path}, std::nullopt))
    out.emplace_back(file, chakra::rank_from_file_name(file));
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "chakrakit's native part: the core's trace reader and the chakra commands (core/docs/python.md)";
  m.attr("version") = CHAKRA_VERSION;
  py::register_exception<chakra::Error>(m, "ChakraError", PyExc_RuntimeError);
  m.def("run", &run, py::arg("program"), py::arg("args"), py::arg("progress") = py::none(),
        "Runs the chakra binary PROGRAM on ARGS: (exit code, stdout bytes, stderr bytes).");
  m.def("spawn", &spawn, py::arg("program"), py::arg("args"),
        "Starts the chakra binary PROGRAM on ARGS: (pid, stdout fd, stderr fd); stop it with SIGINT.");
  m.def("read", &read_trace, py::arg("path"), py::arg("metadata") = "auto", py::arg("max_nodes") = 0,
        py::arg("progress") = py::none());
  m.def("trace_files", &trace_files, py::arg("path"));
  py::class_<PyTrace>(m, "Trace")
      .def("__len__", &PyTrace::size)
      .def_property_readonly("path", &PyTrace::path)
      .def("node_columns", &PyTrace::nodes)
      .def("dependency_columns", &PyTrace::dependencies)
      .def("attribute_columns", &PyTrace::attributes)
      .def("metadata", &PyTrace::metadata);
}
