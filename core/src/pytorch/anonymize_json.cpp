#include "chakra/pytorch/anonymize_json.h"

#include <cctype>
#include <charconv>
#include <string>
#include <string_view>

#include "chakra/format/json_pull.h"
#include "chakra/format/json_writer.h"
#include "chakra/support/error.h"

namespace chakra {

namespace {

using Kind = JsonPull::Kind;
using namespace std::string_view_literals;

// Kineto's event categories (ActivityType names, the flows', and the 1.x vintage's): the linker
// and the analyses tell ops apart by them.
bool kineto_category(std::string_view c) {
  static constexpr std::string_view kKnown[] = {"cpu_op",
                                                "user_annotation",
                                                "gpu_user_annotation",
                                                "gpu_memcpy",
                                                "gpu_memset",
                                                "kernel",
                                                "external_correlation",
                                                "cuda_runtime",
                                                "cuda_driver",
                                                "cuda_sync",
                                                "cpu_instant_event",
                                                "python_function",
                                                "overhead",
                                                "cuda_profiler_range",
                                                "mtia_runtime",
                                                "mtia_ccp_events",
                                                "glow_runtime",
                                                "hpu_op",
                                                "xpu_runtime",
                                                "xpu_driver",
                                                "collective_comm",
                                                "privateuse1_runtime",
                                                "privateuse1_driver",
                                                "ac2g",
                                                "fwdbwd",
                                                "async",
                                                "async_gpu",
                                                "async_cpu_to_gpu",
                                                "Trace",
                                                "Operator",
                                                "Runtime",
                                                "Kernel",
                                                "Memcpy",
                                                "Memset"};
  for (std::string_view k : kKnown)
    if (c == k) return true;
  return false;
}

// Kineto args whose strings are enumerations (types, kinds of synchronisation, collectives).
bool enumeration_arg(std::string_view key) {
  return key == "Input type"sv || key == "dtype"sv || key == "cuda_sync_kind"sv || key == "Collective name"sv;
}

// A track label Kineto writes: "CPU", "GPU 0", "stream 7 ", "Device 0".
bool device_label(std::string_view s) {
  for (std::string_view word : {"CPU"sv, "GPU"sv, "stream"sv, "Device"sv}) {
    if (s.substr(0, word.size()) != word) continue;
    std::string_view rest = s.substr(word.size());
    if (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
    if (rest.empty()) return true;
    return rest.size() > 1 && rest[0] == ' ' &&
           rest.substr(1).find_first_not_of("0123456789") == std::string_view::npos;
  }
  return false;
}

class Walker {
 public:
  Walker(const Anonymizer& a, JsonPull& p, JsonWriter& w, AnonymizeReport& r) : a_(a), p_(p), w_(w), r_(r) {}

  PytorchJsonKind document(const std::string& name) {
    if (p_.peek() != Kind::Object) p_.fail("not a PyTorch host ET or Kineto trace: the top level is not a JSON object");
    bool nodes = false, events = false;
    p_.begin_object();
    w_.begin_object();
    for (std::string_view k; p_.next_key(k);) {
      w_.key(k);
      if (k == "nodes"sv && p_.peek() == Kind::Array) {
        nodes = true;
        objects([&] { node(); });
      } else if (k == "traceEvents"sv && p_.peek() == Kind::Array) {
        events = true;
        objects([&] { event(); });
      } else if (k == "schema"sv) {  // the host ET's format version
        copy(kept);
      } else if (value_policy(k) == ValuePolicy::Name) {  // the linker's profiler steps
        copy([&](std::string_view s) { return a_.name(s, r_); });
      } else if (k == "displayTimeUnit"sv) {
        copy([&](std::string_view s) {
          return s == "ms"sv || s == "ns"sv ? std::string(s) : a_.text(s, r_.metadata_strings);
        });
      } else {
        copy([&](std::string_view s) { return a_.text(s, r_.metadata_strings); });
      }
    }
    w_.end_object();
    if (!p_.at_end()) p_.fail("unexpected data after the JSON document");
    if (!nodes && !events)
      throw Error(name +
                  ": neither a PyTorch host execution trace (no \"nodes\" list) nor a Kineto trace (no "
                  "\"traceEvents\" list)");
    return nodes ? PytorchJsonKind::HostEt : PytorchJsonKind::Kineto;
  }

 private:
  static std::string kept(std::string_view s) { return std::string(s); }

  // The next value, each string in it as string(s) makes it; numbers as written (tensor
  // dimensions rounded up when `shape` and the options ask).
  template <class String>
  void copy(String&& string, bool shape = false) {
    switch (p_.peek()) {
      case Kind::Object:
        p_.begin_object();
        w_.begin_object();
        for (std::string_view k; p_.next_key(k);) {
          w_.key(k);
          copy(string, shape);
        }
        w_.end_object();
        break;
      case Kind::Array:
        p_.begin_array();
        w_.begin_array();
        while (p_.next_element()) copy(string, shape);
        w_.end_array();
        break;
      case Kind::String: w_.value(string(p_.read_string_view())); break;
      case Kind::Number: {
        bool integer = false;
        const std::string_view text = p_.read_number_text(integer);
        uint64_t v = 0;
        if (shape && integer && a_.options().bucket_shapes &&
            std::from_chars(text.data(), text.data() + text.size(), v).ec == std::errc()) {
          r_.shapes_bucketed += bucketed_dimension(v) != v;
          w_.value_uint(bucketed_dimension(v));
        } else {
          w_.value_raw(text);
        }
        break;
      }
      case Kind::Bool: w_.value(p_.read_bool()); break;
      case Kind::Null:
        p_.read_null();
        w_.value_null();
        break;
      case Kind::End: p_.fail("unexpected end of input (truncated file?)");
    }
  }

  // An array whose objects each(): other elements copied as strings of no known kind.
  template <class Each>
  void objects(Each&& each) {
    p_.begin_array();
    w_.begin_array();
    while (p_.next_element()) {
      if (p_.peek() == Kind::Object)
        each();
      else
        copy([&](std::string_view s) { return a_.text(s, r_.metadata_strings); });
    }
    w_.end_array();
  }

  std::string name(std::string_view s) { return a_.name(s, r_); }
  std::string category(std::string_view s, uint64_t& count) {
    return kineto_category(s) ? std::string(s) : a_.text(s, count);
  }

  // A host ET string value: a process_group:init node's groups (a JSON list), or text.
  std::string host_value(std::string_view s, uint64_t& count) {
    if (s.substr(0, 2) == "[{"sv && s.find("pg_name") != std::string_view::npos)
      if (std::optional<std::string> groups = a_.process_groups(s, r_)) return *groups;
    return a_.text(s, count);
  }

  void node() {
    ++r_.nodes;
    p_.begin_object();
    w_.begin_object();
    for (std::string_view k; p_.next_key(k);) {
      w_.key(k);
      if (k == "name"sv) {
        copy([&](std::string_view s) { return name(s); });
      } else if (k == "input_types"sv || k == "output_types"sv) {
        copy(kept);
      } else if (k == "input_shapes"sv || k == "output_shapes"sv) {
        copy([&](std::string_view s) { return a_.text(s, r_.io_literals); }, true);
      } else if (k == "inputs"sv || k == "outputs"sv) {
        io();
      } else if (k == "attrs"sv && p_.peek() == Kind::Array) {
        objects([&] { attr(); });
      } else if (k == "cat"sv) {
        copy([&](std::string_view s) { return category(s, r_.attributes["cat"]); });
      } else if (value_policy(k) == ValuePolicy::Kept) {
        copy(kept);
      } else {
        uint64_t& count = r_.attributes[std::string(k)];
        copy([&](std::string_view s) { return host_value(s, count); });
      }
    }
    w_.end_object();
  }

  // A node's inputs or outputs: a value list, or (schema 1.1) {"values", "shapes", "types"}.
  void io() {
    auto values = [&](std::string_view s) { return host_value(s, r_.io_literals); };
    if (p_.peek() != Kind::Object) return copy(values);
    p_.begin_object();
    w_.begin_object();
    for (std::string_view k; p_.next_key(k);) {
      w_.key(k);
      if (k == "types"sv)
        copy(kept);
      else
        copy(values, k == "shapes"sv);
    }
    w_.end_object();
  }

  // An entry of a node's "attrs": its name and type kept, its value as any other.
  void attr() {
    std::string attr_name = "attrs";
    p_.begin_object();
    w_.begin_object();
    for (std::string_view k; p_.next_key(k);) {
      w_.key(k);
      if (k == "name"sv || k == "type"sv) {
        const bool is_name = k == "name"sv;
        copy([&](std::string_view s) {
          if (is_name) attr_name = s;
          return std::string(s);
        });
      } else {
        uint64_t& count = r_.attributes[attr_name];
        copy([&](std::string_view s) { return host_value(s, count); });
      }
    }
    w_.end_object();
  }

  void event() {
    ++r_.events;
    p_.begin_object();
    w_.begin_object();
    for (std::string_view k; p_.next_key(k);) {
      w_.key(k);
      if (k == "name"sv) {
        copy([&](std::string_view s) { return name(s); });
      } else if (k == "ph"sv || k == "bp"sv || k == "s"sv) {  // a phase, binding point or scope: one letter
        uint64_t& count = r_.attributes[std::string(k)];
        copy([&](std::string_view s) { return s.size() == 1 ? std::string(s) : a_.text(s, count); });
      } else if (k == "cat"sv) {
        copy([&](std::string_view s) { return category(s, r_.attributes["cat"]); });
      } else if (k == "args"sv && p_.peek() == Kind::Object) {
        args();
      } else {
        uint64_t& count = r_.attributes[std::string(k)];
        copy([&](std::string_view s) { return a_.text(s, count); });
      }
    }
    w_.end_object();
  }

  void args() {
    p_.begin_object();
    w_.begin_object();
    for (std::string_view k; p_.next_key(k);) {
      w_.key(k);
      if (enumeration_arg(k)) {
        copy(kept);
      } else {
        uint64_t& count = r_.attributes[std::string(k)];
        copy([&](std::string_view s) { return device_label(s) ? std::string(s) : a_.text(s, count); });
      }
    }
    w_.end_object();
  }

  const Anonymizer& a_;
  JsonPull& p_;
  JsonWriter& w_;
  AnonymizeReport& r_;
};

}  // namespace

PytorchJsonKind anonymize_pytorch_json(const Anonymizer& anonymizer, std::unique_ptr<ByteSource> in, ByteSink& out,
                                       AnonymizeReport& report) {
  JsonPull p(*in);
  JsonWriter w(out);
  const PytorchJsonKind kind = Walker(anonymizer, p, w, report).document(in->name());
  w.raw("\n");
  w.flush();
  return kind;
}

}  // namespace chakra
