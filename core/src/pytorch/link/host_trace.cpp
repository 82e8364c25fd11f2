// The linker's part: the host execution trace (link_parts.h).
#include "pytorch/link/link_parts.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>

#include "chakra/support/error.h"
#include "chakra/support/text.h"

namespace chakra::link {

LinkReport::OutsideRoot count_outside_root(const std::vector<HostNode>& nodes,
                                           const std::unordered_map<int64_t, int32_t>& index_of_id) {
  LinkReport::OutsideRoot out;
  std::vector<int8_t> under(nodes.size(), -1);  // -1 unknown, 0 no, 1 yes
  std::vector<int32_t> chain;
  for (size_t start = 0; start < nodes.size(); ++start) {
    // Up the parents until a node whose answer is known, node 1 or a missing parent; then the
    // whole chain walked has that answer.
    chain.clear();
    int32_t i = static_cast<int32_t>(start);
    int8_t answer = 0;
    while (true) {
      if (under[i] >= 0) {
        answer = under[i];
        break;
      }
      if (nodes[i].id == 1) {
        answer = under[i] = 1;
        break;
      }
      under[i] = 0;  // provisional, so that a parent cycle ends the walk (it never reaches node 1)
      chain.push_back(i);
      auto parent = nodes[i].has_parent ? index_of_id.find(nodes[i].parent) : index_of_id.end();
      if (parent == index_of_id.end()) break;
      i = parent->second;
    }
    for (int32_t c : chain) under[c] = answer;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const HostNode& n = nodes[i];
    if (under[i] == 1 || n.id == 1) continue;
    ++out.nodes;
    if (n.has_parent && !index_of_id.count(n.parent)) ++out.missing_parent;
  }
  return out;
}

void load_host(std::unique_ptr<ByteSource> in, Host& h, Progress* progress) {
  h.name = in->name();
  h.input = std::make_unique<WholeInput>(std::move(in));
  h.text = h.input->view();
  JsonPull p(*h.input->source, h.text);
  if (p.peek() != JsonPull::Kind::Object)
    throw Error(h.name + ": not a PyTorch execution trace (expected a JSON object)");
  // Keys are views, valid until the parser's next call: each is compared before anything else is
  // read.
  std::string_view key;
  std::string attr_name, scratch;
  bool found = false, trace_events = false;
  p.begin_object();
  while (p.next_key(key)) {
    trace_events |= is(key, "traceEvents");
    if (is(key, "schema")) {
      if (p.peek() == JsonPull::Kind::String)
        p.read_string(h.schema);
      else
        p.skip();
    } else if (is(key, "pid")) {
      h.pid = read_int_like(p, scratch);
    } else if (is(key, "nodes")) {
      if (p.peek() != JsonPull::Kind::Array) p.fail("\"nodes\" is not an array");
      found = true;
      const size_t array_begin = p.offset();
      p.begin_array();
      while (p.next_element()) {
        if (p.peek() != JsonPull::Kind::Object) p.fail("a node is not a JSON object");
        HostNode n;
        n.begin = p.offset();
        bool has_id = false;
        p.begin_object();
        while (p.next_key(key)) {
          if (is(key, "id")) {
            if (p.peek() != JsonPull::Kind::Number) p.fail("node \"id\" is not a number");
            n.id = p.read_int64();
            has_id = true;
          } else if (is(key, "name")) {
            if (p.peek() == JsonPull::Kind::String) {
              p.read_string(scratch);
              n.name = h.strings.intern(scratch);
            } else {
              p.skip();
            }
          } else if (is(key, "ctrl_deps") || (is(key, "parent") && !n.has_ctrl_deps)) {
            const bool ctrl = is(key, "ctrl_deps");
            JsonPull::Kind k = p.peek();
            if (k == JsonPull::Kind::Number) {
              n.parent = p.read_int64();
              n.has_parent = true;
              n.parent_is_null = false;
            } else if (k == JsonPull::Kind::Null && ctrl) {
              p.read_null();
              n.parent_is_null = true;
            } else if (ctrl) {
              p.fail("node \"ctrl_deps\" is not a node id");
            } else {
              p.skip();
            }
            n.has_ctrl_deps |= ctrl;
          } else if (is(key, "rf_id") || is(key, "tid")) {
            const bool tid = is(key, "tid");
            if (p.peek() != JsonPull::Kind::Number) {
              p.skip();
            } else if (tid) {
              n.tid = p.read_int64();
            } else {
              n.rf_id = p.read_int64();
              n.has_rf = true;
            }
          } else if (is(key, "attrs")) {
            if (p.peek() != JsonPull::Kind::Array) {
              p.skip();
              continue;
            }
            p.begin_array();
            while (p.next_element()) {
              if (p.peek() != JsonPull::Kind::Object) {
                p.skip();
                continue;
              }
              p.begin_object();
              attr_name.clear();
              std::optional<int64_t> value;
              while (p.next_key(key)) {
                if (is(key, "name")) {
                  if (p.peek() == JsonPull::Kind::String)
                    p.read_string(attr_name);
                  else
                    p.skip();
                } else if (is(key, "value")) {
                  if (p.peek() == JsonPull::Kind::Number)
                    value = p.read_int64();
                  else
                    p.skip();
                } else {
                  p.skip();
                }
              }
              if (value && attr_name == "rf_id"sv) {
                n.rf_id = *value;
                n.has_rf = true;
              }
              if (value && attr_name == "tid"sv) n.tid = *value;
            }
          } else {
            p.skip();
          }
        }
        n.end = p.offset();
        if (!has_id) p.fail("a node has no \"id\"");
        h.nodes.push_back(n);
        if ((h.nodes.size() & 0xfff) == 0) report_progress(progress, "reading host trace", n.end, h.text.size());
      }
      h.node_arrays.push_back({array_begin, p.offset()});
    } else {
      p.skip();
    }
  }
  if (!p.at_end()) p.fail("unexpected data after the JSON document");
  if (!found && trace_events)
    throw Error(h.name +
                ": this is a Kineto (profiler) trace, not a host execution trace (are the host and device "
                "traces swapped?)");
  if (!found) throw Error(h.name + ": not a PyTorch execution trace (no \"nodes\" array)");
}

bool is_et_annotation(std::string_view name) { return name.rfind("[pytorch|profiler|execution_", 0) == 0; }

}  // namespace chakra::link
