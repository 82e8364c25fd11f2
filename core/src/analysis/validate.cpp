#include "chakra/analysis/validate.h"

#include <algorithm>
#include <optional>

#include "chakra/format/wire.h"
#include "chakra/support/text.h"
#include "chakra/trace/graph.h"

namespace chakra {

std::string describe_node(const Trace& t, uint32_t n) {
  std::string s = "node id ";
  append_uint(s, t.id(n));
  std::string_view name = t.name(n);
  if (!name.empty()) {
    s += " \"";
    s.append(name.substr(0, 80));
    if (name.size() > 80) s += "...";
    s += '"';
  }
  return s;
}

bool looks_like_legacy_schema(const Trace& t) {
  uint32_t legacy_nodes = 0;
  for (uint32_t n = 0; n < t.size(); ++n) {
    std::string_view raw = t.unknown_fields(n);
    if (raw.empty()) continue;
    auto* p = reinterpret_cast<const uint8_t*>(raw.data());
    try {
      if ((wire::read_varint(p, p + raw.size()) >> 3) > 10) ++legacy_nodes;
    } catch (const wire::DecodeError&) {}
  }
  return t.size() > 0 && legacy_nodes * 2 > t.size();
}

namespace {

std::string kind_name(AttrKind k) {
  return k == AttrKind::None ? std::string("no value") : std::string(attr_kind_proto_name(k));
}

}  // namespace

class Validator::Checker {
 public:
  Checker(const Trace& t, const ValidateOptions& o) : t_(t), o_(o) {
    if (!t_.strings().find("num_ops", &num_ops_)) num_ops_ = kAbsent;
    if (!t_.strings().find("tensor_size", &tensor_size_)) tensor_size_ = kAbsent;
  }

  // One step of the checks, in order: whole-trace checks and the id index, then the nodes
  // `max_nodes` at a time, then cycles (one step per kind of dependency), then timing. True once
  // all are done.
  bool step(uint32_t max_nodes) {
    switch (phase_) {
      case Phase::Start:
        start();
        phase_ = Phase::Nodes;
        return false;
      case Phase::Nodes: {
        const uint32_t end =
            static_cast<uint32_t>(std::min<uint64_t>(t_.size(), uint64_t{next_} + std::max(max_nodes, 1u)));
        for (; next_ < end; ++next_) check_node(next_);
        if (next_ == t_.size()) phase_ = Phase::Cycles;
        return false;
      }
      case Phase::Cycles:  // data deps, then (where they have none) data and ctrl deps together:
        // two steps, each one pass over the graph
        phase_ = check_cycles(*index_, DepKind::Data) ? Phase::Timing : Phase::CtrlCycles;
        return false;
      case Phase::CtrlCycles:
        check_cycles(*index_, DepKind::Both);
        phase_ = Phase::Timing;
        return false;
      case Phase::Timing:
        if (!legacy_) check_timing();
        index_.reset();
        phase_ = Phase::Done;
        return true;
      case Phase::Done: return true;
    }
    return true;
  }
  ValidationReport& report() { return r_; }

 private:
  void start() {
    if (!t_.has_metadata())
      add(Severity::Warning, "no-metadata", -1, [] {
        return std::string(
            "no GlobalMetadata record (an older ASTRA-sim trace): the Chakra Python tools "
            "and ASTRA-sim's feeder read the first node as metadata and lose it");
      });
    if (t_.empty()) add(Severity::Warning, "no-nodes", -1, [] { return std::string("the trace has no nodes"); });

    index_.emplace(t_);
    for (uint64_t id : index_->duplicate_ids())
      add(Severity::Error, "duplicate-id", -1, [&] {
        return "id " + std::to_string(id) + " is used by more than one node; dependencies on it are ambiguous";
      });

    // Node types and attributes mean something else in the pre-0.0.4 schema: judging them by
    // today's rules would only produce noise.
    legacy_ = looks_like_legacy_schema(t_);
    if (legacy_)
      add(Severity::Error, "legacy-schema", -1, [] {
        return std::string(
            "most nodes carry fields numbered above 10, which the Chakra schema does not define: "
            "this looks like a pre-0.0.4 Chakra (execution graph) trace, whose node types and "
            "fields are numbered differently; it cannot be interpreted as a current trace");
      });
  }

  void check_node(uint32_t n) {
    check_deps(n, *index_);
    check_strings(n);
    if (legacy_) return;
    check_type(n);
    check_attrs(n);
    if (!t_.unknown_fields(n).empty()) check_unknown_fields(n);
  }

  template <typename Msg>
  void add(Severity s, std::string_view code, int64_t node, Msg&& message) {
    uint64_t& count = r_.counts[std::string(code)];
    ++count;
    (s == Severity::Error ? r_.errors : r_.warnings)++;
    if (count <= o_.max_per_code) r_.findings.push_back({s, std::string(code), message(), node});
  }

  std::string who(uint32_t n) const { return describe_node(t_, n); }

  // Compute nodes that all last 0 µs and give no roofline inputs leave a simulation nothing to
  // time but communication: what a PyTorch host ET converted without its Kineto trace gives.
  void check_timing() {
    uint64_t compute = 0;
    for (uint32_t n = 0; n < t_.size(); ++n) {
      if (t_.type(n) != static_cast<int32_t>(NodeType::Comp)) continue;
      if (t_.duration_micros(n) > 0 || t_.find_attr(n, "num_ops")) return;
      ++compute;
    }
    if (compute)
      add(Severity::Warning, "no-durations", -1, [&] {
        return "all " + std::to_string(compute) +
               " compute nodes last 0 µs and none has num_ops for a roofline "
               "estimate: a simulation times communication only (a PyTorch host ET converted without its Kineto "
               "trace? link them first: chakra link --sync-deps)";
      });
  }

  void check_type(uint32_t n) {
    const int32_t type = t_.type(n);
    if (type < 0 || type >= kNodeTypeCount)
      add(Severity::Error, "unknown-node-type", n,
          [&] { return who(n) + " has type " + std::to_string(type) + ", which is not a Chakra node type"; });
    else if (type == static_cast<int32_t>(NodeType::Invalid))
      add(Severity::Warning, "invalid-node", n,
          [&] { return who(n) + " is an INVALID_NODE; simulators skip it and may never release its dependents"; });
  }

  void check_deps(uint32_t n, const IdIndex& index) {
    for (uint64_t dep : t_.data_deps(n))
      if (!index.find(dep))
        add(Severity::Error, "dangling-data-dep", n, [&] {
          return who(n) + " depends on id " + std::to_string(dep) +
                 ", which is not in the trace: it can never be issued (ASTRA-sim waits forever)";
        });
    for (uint64_t dep : t_.ctrl_deps(n))
      if (!index.find(dep))
        add(Severity::Error, "dangling-ctrl-dep", n, [&] {
          return who(n) + " has ctrl_dep id " + std::to_string(dep) +
                 ", which is not in the trace (ASTRA-sim's feeder rejects the file)";
        });
    auto deps = t_.data_deps(n);
    if (deps.size() > 1) {
      scratch_.assign(deps.begin(), deps.end());
      std::sort(scratch_.begin(), scratch_.end());
      auto dup = std::adjacent_find(scratch_.begin(), scratch_.end());
      if (dup != scratch_.end())
        add(Severity::Warning, "duplicate-dep", n, [&] {
          return who(n) + " lists data dependency id " + std::to_string(*dup) +
                 " more than once (Chakra's feeder v1 then never issues it)";
        });
    }
  }

  void check_attrs(uint32_t n) {
    const int32_t type = t_.type(n);
    const bool comm = type == static_cast<int32_t>(NodeType::CommColl) ||
                      type == static_cast<int32_t>(NodeType::CommSend) ||
                      type == static_cast<int32_t>(NodeType::CommRecv);
    for (uint32_t a = t_.attr_begin(n); a < t_.attr_end(n); ++a) {
      AttrView attr = t_.attr(a);
      for (uint32_t b = t_.attr_begin(n); b < a; ++b)
        if (t_.node_attrs().name(b) == t_.node_attrs().name(a)) {
          add(Severity::Warning, "duplicate-attr", n, [&] {
            return who(n) + " has attribute \"" + std::string(attr.name()) + "\" more than once; readers use the first";
          });
          break;
        }
      const KnownAttr* known = find_known_attr(attr.name());
      if (!known || attr.kind() == known->kind) continue;
      if ((known->rule == KindRule::AnyInteger || known->rule == KindRule::BoolOrInteger) && is_integer(attr.kind()))
        add(Severity::Warning, "attr-kind-v1", n, [&] {
          return who(n) + ": \"" + std::string(known->name) + "\" is " + kind_name(attr.kind()) +
                 "; ASTRA-sim reads it, but Chakra's feeder v1 reads only " + kind_name(known->kind) +
                 " and sees an unset value";
        });
      else
        add(Severity::Error, "attr-kind", n, [&] {
          return who(n) + ": \"" + std::string(known->name) + "\" is " + kind_name(attr.kind()) + "; readers expect " +
                 kind_name(known->kind) + (known->rule == KindRule::AnyInteger ? " (or another integer kind)" : "");
        });
    }
    if (comm) check_comm(n, type);
    if (type == static_cast<int32_t>(NodeType::Comp) && has_attr(n, num_ops_) && !has_attr(n, tensor_size_))
      add(Severity::Warning, "roofline-attrs", n,
          [&] { return who(n) + " has num_ops but no tensor_size; roofline compute models need both"; });
    if ((type == static_cast<int32_t>(NodeType::MemLoad) || type == static_cast<int32_t>(NodeType::MemStore)) &&
        !has_attr(n, tensor_size_))
      add(Severity::Error, "missing-mem-attr", n,
          [&] { return who(n) + " is a memory node without \"tensor_size\" (ASTRA-sim requires it)"; });
  }

  void require(uint32_t n, std::string_view attr, Severity s, std::string_view why) {
    if (t_.find_attr(n, attr)) return;
    add(s, s == Severity::Error ? "missing-comm-attr" : "defaulted-comm-attr", n, [&] {
      return who(n) + " (" + std::string(node_type_name(t_.type(n))) + ") has no \"" + std::string(attr) + "\" " +
             std::string(why);
    });
  }

  void check_comm(uint32_t n, int32_t type) {
    static constexpr std::string_view kRequired = "(ASTRA-sim requires it)";
    require(n, "comm_size", Severity::Error, kRequired);
    if (type == static_cast<int32_t>(NodeType::CommColl)) {
      require(n, "comm_type", Severity::Error, kRequired);
      if (auto ct = t_.find_attr(n, "comm_type"); ct && ct->as_int64()) {
        const int64_t v = *ct->as_int64();
        if (comm_type_name(v).empty())
          add(Severity::Error, "bad-comm-type", n,
              [&] { return who(n) + " has comm_type " + std::to_string(v) + ", which is not a collective type"; });
        else if (v != static_cast<int64_t>(CommType::AllReduce) && v != static_cast<int64_t>(CommType::AllToAll) &&
                 v != static_cast<int64_t>(CommType::AllGather) && v != static_cast<int64_t>(CommType::ReduceScatter) &&
                 v != static_cast<int64_t>(CommType::Broadcast))
          add(Severity::Warning, "unsupported-collective", n, [&] {
            return who(n) + " is " + with_article(comm_type_name(v)) +
                   ", which ASTRA-sim does not simulate (it aborts)";
          });
      }
    } else if (type == static_cast<int32_t>(NodeType::CommSend)) {
      require(n, "comm_dst", Severity::Error, kRequired);
      require(n, "comm_tag", Severity::Error, kRequired);
      require(n, "comm_src", Severity::Warning, "(ASTRA-sim assumes the sending rank)");
    } else {
      require(n, "comm_src", Severity::Error, kRequired);
      require(n, "comm_tag", Severity::Error, kRequired);
      require(n, "comm_dst", Severity::Warning, "(ASTRA-sim assumes the receiving rank)");
    }
    if (auto size = t_.find_attr(n, "comm_size");
        size && is_integer(size->kind()) && !is_unsigned(size->kind()) && static_cast<int64_t>(size->bits()) < 0)
      add(Severity::Error, "bad-comm-size", n, [&] {
        return who(n) + " has a negative comm_size (" + std::to_string(static_cast<int64_t>(size->bits())) + ")";
      });
    if (auto cpu = t_.find_attr(n, "is_cpu_op"); cpu && cpu->as_bool().value_or(false))
      add(Severity::Error, "comm-on-cpu", n,
          [&] { return who(n) + " is a communication node marked is_cpu_op=true (ASTRA-sim aborts)"; });
    if (auto pg = t_.find_attr(n, "pg_name"); pg && pg->as_string()) {
      std::string_view name = *pg->as_string();
      bool numeric =
          !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!name.empty() && !numeric)
        add(Severity::Warning, "pg-name", n, [&] {
          return who(n) + " has pg_name \"" + std::string(name) +
                 "\"; ASTRA-sim expects \"\" or a number naming a communicator group";
        });
    }
  }

  // Whether node n has an attribute of this interned name: ids compared, not text (every
  // compute node asks for num_ops).
  bool has_attr(uint32_t n, StrId name) const {
    if (name == kAbsent) return false;
    for (uint32_t a = t_.attr_begin(n); a < t_.attr_end(n); ++a)
      if (t_.node_attrs().name(a) == name) return true;
    return false;
  }

  bool valid_utf8(StrId id) {
    if (utf8_.size() < t_.strings().size()) utf8_.resize(t_.strings().size(), 0);
    uint8_t& state = utf8_[id];  // 0 unknown, 1 valid, 2 invalid
    if (state == 0) state = is_valid_utf8(t_.str(id)) ? 1 : 2;
    return state == 1;
  }

  void check_strings(uint32_t n) {
    bool ok = valid_utf8(t_.name_id(n));
    for (const IoStrings* io : {&t_.inputs(n), &t_.outputs(n)})
      ok = ok && valid_utf8(io->values) && valid_utf8(io->shapes) && valid_utf8(io->types);
    for (uint32_t a = t_.attr_begin(n); a < t_.attr_end(n) && ok; ++a) {
      const AttrTable& at = t_.node_attrs();
      ok = valid_utf8(at.name(a)) && valid_utf8(at.doc(a));
      if (ok && at.kind(a) == AttrKind::String) ok = valid_utf8(static_cast<StrId>(at.bits(a)));
      if (ok && at.kind(a) == AttrKind::StringList)
        for (uint64_t s : at.list(a)) ok = ok && valid_utf8(static_cast<StrId>(s));
    }
    if (!ok)
      add(Severity::Warning, "invalid-utf8", n, [&] {
        return who(n) + " has a string that is not valid UTF-8 (protobuf's Python runtime rejects the file)";
      });
  }

  void check_unknown_fields(uint32_t n) {
    add(Severity::Warning, "unknown-fields", n, [&] {
      std::string fields;
      std::string_view raw = t_.unknown_fields(n);
      auto* p = reinterpret_cast<const uint8_t*>(raw.data());
      const uint8_t* end = p + raw.size();
      try {
        while (p < end) {
          uint64_t key = wire::read_varint(p, end);
          if (!fields.empty()) fields += ", ";
          append_uint(fields, key >> 3);
          wire::skip_value(static_cast<uint32_t>(key & 7), static_cast<uint32_t>(key >> 3), p, end);
        }
      } catch (const wire::DecodeError&) {}
      return who(n) + " has fields the Chakra schema does not define (numbers " + fields +
             "); a pre-0.0.4 Chakra/EG trace uses other field and node-type numbers";
    });
  }

  void report_cycles(const Trace& t, const CycleReport& cycles, std::string_view code, std::string_view via) {
    for (const auto& cycle : cycles.examples) {
      add(Severity::Error, code, cycle[0], [&] {
        if (cycle.size() == 1) return who(cycle[0]) + " depends on itself" + std::string(via);
        std::string s = "dependency cycle" + std::string(via) + ": ";
        const size_t shown = std::min<size_t>(cycle.size(), 12);
        for (size_t i = 0; i < shown; ++i) s += who(cycle[i]) + " -> ";
        if (shown < cycle.size()) s += "... (" + std::to_string(cycle.size()) + " nodes) -> ";
        return s + who(cycle[0]);
      });
    }
    for (uint64_t i = cycles.examples.size(); i < cycles.components; ++i)
      add(Severity::Error, code, -1, [] { return std::string(); });
  }

  // Reports the cycles through deps of `kind`; true when there are some.
  bool check_cycles(const IdIndex& index, DepKind kind) {
    CycleReport found = find_cycles(DepGraph::build(t_, index, kind), o_.max_per_code);
    if (kind == DepKind::Data)
      report_cycles(t_, found, "cycle", "");
    else
      report_cycles(t_, found, "ctrl-cycle", " through ctrl_deps (ASTRA-sim's feeder follows them too and deadlocks)");
    return found.components > 0;
  }

  const Trace& t_;
  const ValidateOptions o_;
  ValidationReport r_;
  enum class Phase { Start, Nodes, Cycles, CtrlCycles, Timing, Done } phase_ = Phase::Start;
  std::optional<IdIndex> index_;
  bool legacy_ = false;
  uint32_t next_ = 0;  // the next node to check
  std::vector<uint64_t> scratch_;
  std::vector<uint8_t> utf8_;
  static constexpr StrId kAbsent = UINT32_MAX;  // a name no node has (not in the string pool)
  StrId num_ops_ = kAbsent, tensor_size_ = kAbsent;
};

Validator::Validator(const Trace& trace, const ValidateOptions& options)
    : checker_(std::make_unique<Checker>(trace, options)) {}
Validator::~Validator() = default;
bool Validator::step(uint32_t max_nodes) { return checker_->step(max_nodes); }
ValidationReport Validator::take_report() { return std::move(checker_->report()); }

ValidationReport validate(const Trace& trace, const ValidateOptions& options) {
  Validator v(trace, options);
  while (!v.step(UINT32_MAX)) {}
  return v.take_report();
}

void write_report_json(const Trace& trace, const ValidationReport& r, JsonWriter& w) {
  w.begin_object();
  w.key("errors").value_uint(r.errors);
  w.key("warnings").value_uint(r.warnings);
  w.key("counts").begin_object();
  for (const auto& [code, count] : r.counts) w.key(code).value_uint(count);
  w.end_object();
  w.key("findings").begin_array();
  for (const Finding& f : r.findings) {
    w.begin_object();
    w.key("severity").value(f.severity == Severity::Error ? "error" : "warning");
    w.key("code").value(f.code);
    w.key("message").value(f.message);
    if (f.node >= 0) {
      w.key("node").value_int(f.node);
      w.key("id").value_uint(trace.id(static_cast<uint32_t>(f.node)));
    }
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace chakra

namespace chakra {

std::string attr_value_text(const Trace& trace, const AttrView& attr, size_t max_elements) {
  auto scalar = [&](AttrKind kind, uint64_t bits) -> std::string {
    if (is_floating(kind)) return format_number(kind == AttrKind::Float ? float_of_bits(bits) : double_of_bits(bits));
    if (kind == AttrKind::Bool) return bits ? "true" : "false";
    if (is_text(kind)) return "\"" + std::string(trace.str(static_cast<StrId>(bits))) + "\"";
    if (is_unsigned(kind)) return std::to_string(bits);
    return std::to_string(static_cast<int64_t>(bits));
  };
  AttrKind kind = attr.kind();
  if (kind == AttrKind::None) return "(no value)";
  if (!is_list(kind)) return scalar(kind, attr.bits());
  std::span<const uint64_t> list = attr.list();
  std::string out = "[";
  for (size_t i = 0; i < list.size() && i < max_elements; ++i)
    out += (i ? ", " : "") + scalar(element_kind(kind), list[i]);
  if (list.size() > max_elements) out += ", … (" + std::to_string(list.size()) + " in all)";
  return out + "]";
}

}  // namespace chakra
