// StableHLO programs analysed: executed (calls inlined, loops unrolled), FLOPs and bytes counted.
// Ops are classed and fused in stablehlo_ops.cpp; the parser is in stablehlo_parse.cpp, the cost
// model and devices in stablehlo_cost.cpp, per-device traces in stablehlo_trace.cpp, prediction
// in stablehlo_predict.cpp.
#include "chakra/stablehlo/stablehlo.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <numeric>
#include <unordered_map>

#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/trace/schema.h"
#include "chakra/trace/trace.h"
#include "stablehlo_ir.h"
#include "stablehlo_parts.h"

namespace chakra::stablehlo {

using ir::Tok;

// ---- Program --------------------------------------------------------------------------------

struct Program::Impl {
  std::unique_ptr<ir::File> file;
};

Program::Program(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Program::~Program() = default;
Program::Program(Program&&) noexcept = default;
Program& Program::operator=(Program&&) noexcept = default;
size_t Program::modules() const { return impl_->file->modules.size(); }
std::string_view Program::module_name(size_t m) const { return impl_->file->modules.at(m).name; }
const std::string& Program::file() const { return impl_->file->name; }

Program parse_program(std::string text, const std::string& name) {
  auto impl = std::make_unique<Program::Impl>();
  impl->file = ir::parse(std::move(text), name);
  return Program(std::move(impl));
}

Program load_program(const std::string& path) { return parse_program(read_file(path), path); }

namespace {

// The value of a scalar `stablehlo.constant dense<N> : tensor<...>`, for while trip counts.
std::optional<int64_t> scalar_constant(const ir::File& f, const ir::Op& op) {
  if (short_name(op.name) != "constant" || op.attr_begin >= op.attr_end || !f.tokens[op.attr_begin].is("dense") ||
      op.result_types.size() != 1 || !op.result_types[0].dims.empty())
    return std::nullopt;
  std::vector<int64_t> v = ir::int_list(f, op.attr_begin);
  if (v.size() != 1) return std::nullopt;
  return v[0];
}

struct Value {
  int64_t producer = -1;  // ExecOp index, -1 for arguments and constants
  const TensorType* type = nullptr;
  std::optional<int64_t> constant;  // scalar integer constants, for while trip counts
};

const TensorType kNoType{};

class Scope {
 public:
  explicit Scope(const Scope* parent) : parent_(parent) {}
  void bind(std::string_view name, Value v) { values_[name] = v; }
  const Value* find(std::string_view name) const {
    for (const Scope* s = this; s; s = s->parent_) {
      auto it = s->values_.find(name);
      if (it != s->values_.end()) return &it->second;
    }
    return nullptr;
  }

 private:
  const Scope* parent_;
  std::unordered_map<std::string_view, Value> values_;
};

class Executor {
 public:
  Executor(const ir::File& f, const ir::Module& m, Analysis& a, const AnalyzeOptions& o) : f_(f), m_(m), a_(a), o_(o) {}

  void run(const ir::Func& entry) {
    Scope s(nullptr);
    for (size_t k = 0; k < entry.body.args.size(); ++k) s.bind(entry.body.args[k], {-1, &entry.body.arg_types[k], {}});
    std::vector<Value> ret;
    run_block(entry.body, s, ret, 0);
  }

 private:
  [[noreturn]] void fail(const ir::Op& op, const std::string& what) const {
    throw Error(f_.name + ":" + std::to_string(op.line) + ":" + std::to_string(op.col) + ": " + what);
  }
  void warn(const std::string& w) {
    if (std::find(a_.warnings.begin(), a_.warnings.end(), w) == a_.warnings.end()) a_.warnings.push_back(w);
  }

  Value operand(const ir::Op& op, size_t k, const Scope& s) {
    const Value* v = s.find(op.operands[k]);
    if (!v) fail(op, "'" + std::string(op.operands[k]) + "' is used but never defined");
    Value out = *v;
    if ((!out.type || (out.type->bits == 0 && out.type->tuple_bytes < 0)) && k < op.operand_types.size())
      out.type = &op.operand_types[k];
    if (!out.type) out.type = &kNoType;
    return out;
  }
  std::vector<Value> operands(const ir::Op& op, const Scope& s) {
    std::vector<Value> v;
    v.reserve(op.operands.size());
    for (size_t k = 0; k < op.operands.size(); ++k) v.push_back(operand(op, k, s));
    return v;
  }
  void bind_results(const ir::Op& op, Scope& s, int64_t producer, std::optional<int64_t> constant = {}) {
    for (size_t k = 0; k < op.results.size(); ++k)
      s.bind(op.results[k], {producer, k < op.result_types.size() ? &op.result_types[k] : &kNoType, constant});
  }
  void bind_values(const ir::Op& op, Scope& s, const std::vector<Value>& values) {
    if (values.size() < op.results.size())
      fail(op, std::string(op.name) + " yields " + std::to_string(values.size()) + " values for " +
                   std::to_string(op.results.size()) + " results");
    for (size_t k = 0; k < op.results.size(); ++k) {
      Value v = values[k];
      if (k < op.result_types.size()) v.type = &op.result_types[k];
      s.bind(op.results[k], v);
    }
  }

  void run_block(const ir::Block& b, Scope& s, std::vector<Value>& returned, size_t depth) {
    for (const ir::Op& op : b.ops) {
      if (is_return(op.name)) {
        returned = operands(op, s);
        continue;
      }
      run_op(op, s, depth);
    }
  }

  // Runs a block with its arguments bound to `args` in a scope under `parent` (null for a
  // function body, which sees nothing of its caller); returns what it yields.
  std::vector<Value> run_body(const ir::Block& b, const Scope* parent, const std::vector<Value>& args, size_t depth) {
    Scope s(parent);
    for (size_t k = 0; k < b.args.size(); ++k) {
      Value v = k < args.size() ? args[k] : Value{};
      v.type = &b.arg_types[k];
      s.bind(b.args[k], v);
    }
    std::vector<Value> ret;
    run_block(b, s, ret, depth + 1);
    return ret;
  }
  std::vector<Value> run_region(const ir::Op& op, const ir::Region& r, const Scope& outer,
                                const std::vector<Value>& args, size_t depth) {
    if (r.blocks.empty()) return {};
    if (r.blocks.size() > 1) warn(std::string(op.name) + ": regions with several blocks: only the first is counted");
    return run_body(r.blocks[0], &outer, args, depth);
  }

  const ir::Func* find_func(std::string_view name) const {
    for (const ir::Func& fn : m_.funcs)
      if (fn.name == name) return &fn;
    return nullptr;
  }

  void run_op(const ir::Op& op, Scope& s, size_t depth) {
    if (depth > 256) fail(op, "calls or regions nested more than 256 deep (recursion?)");
    const std::string_view sn = short_name(op.name);
    if (sn == "call" && (op.name == "call" || op.name == "func.call")) {
      const ir::Func* fn = find_func(op.callee);
      if (!fn || !fn->has_body) fail(op, "call of undefined function @" + std::string(op.callee));
      bind_values(op, s, run_body(fn->body, nullptr, operands(op, s), depth));
      return;
    }
    if (sn == "while" && !op.regions.empty()) return run_while(op, s, depth);
    if ((sn == "case" || sn == "if") && !op.regions.empty()) return run_branches(op, s, depth);
    if (sn == "manual_computation" || sn == "named_computation") {
      if (op.regions.empty()) fail(op, std::string(op.name) + " without a body");
      bind_values(op, s, run_region(op, op.regions[0], s, operands(op, s), depth));
      return;
    }
    if (sn == "fusion" && !op.regions.empty()) return run_fusion(op, s, depth);
    if (sn == "async_start" && !op.callee.empty()) {
      if (const ir::Func* fn = find_func(op.callee)) {
        int64_t last = -1;  // the bundle is ready when the callee's last result is
        for (const Value& v : run_body(fn->body, nullptr, operands(op, s), depth)) last = std::max(last, v.producer);
        bind_results(op, s, last);
        return;
      }
    }
    if (sn == "async_done" || sn == "async_update") {
      std::vector<Value> args = operands(op, s);
      bind_results(op, s, args.empty() ? -1 : args[0].producer);
      return;
    }
    leaf(op, s);
  }

  void run_while(const ir::Op& op, Scope& s, size_t depth) {
    std::vector<Value> state = operands(op, s);
    const uint64_t trips = trip_count(op, s, state);
    if (op.regions.size() < 2) fail(op, "while needs a cond and a body region");
    for (uint64_t t = 0; t < trips; ++t) {
      std::vector<Value> next = run_region(op, op.regions[1], s, state, depth);
      if (next.size() != state.size())
        fail(op, "while body yields " + std::to_string(next.size()) + " values for " + std::to_string(state.size()) +
                     " loop values");
      state = std::move(next);
    }
    bind_values(op, s, state);
  }

  // The trip count of `for (i = c0; i < N; ++i)`-shaped loops: the cond compares a loop value
  // against a constant, and that loop value starts at a constant.
  uint64_t trip_count(const ir::Op& op, const Scope& outer, const std::vector<Value>& init) {
    const ir::Region& cond = op.regions[0];
    if (!cond.blocks.empty()) {
      const ir::Block& b = cond.blocks[0];
      std::unordered_map<std::string_view, int64_t> consts;
      std::string_view returned;
      for (const ir::Op& c : b.ops) {
        if (std::optional<int64_t> v = scalar_constant(f_, c); v && c.results.size() == 1) consts[c.results[0]] = *v;
        if (is_return(c.name) && c.operands.size() == 1) returned = c.operands[0];
      }
      for (const ir::Op& c : b.ops) {
        if (short_name(c.name) != "compare" || c.results.size() != 1 || c.results[0] != returned ||
            c.operands.size() != 2)
          continue;
        auto arg_index = [&](std::string_view n) -> int {
          for (size_t k = 0; k < b.args.size(); ++k)
            if (b.args[k] == n) return static_cast<int>(k);
          return -1;
        };
        auto constant = [&](std::string_view n) -> std::optional<int64_t> {
          if (auto it = consts.find(n); it != consts.end()) return it->second;
          if (const Value* v = outer.find(n)) return v->constant;
          return std::nullopt;
        };
        const int i = arg_index(c.operands[0]);
        const std::optional<int64_t> limit = constant(c.operands[1]);
        if (i >= 0 && limit && static_cast<size_t>(i) < init.size() && init[i].constant) {
          const int64_t start = *init[i].constant;
          int64_t n = -1;
          if (ir::has_word(f_, c, "LT"))
            n = *limit - start;
          else if (ir::has_word(f_, c, "LE"))
            n = *limit - start + 1;
          else if (ir::has_word(f_, c, "NE"))
            n = *limit - start;
          if (n >= 0) return static_cast<uint64_t>(n);
        }
      }
    }
    warn("line " + std::to_string(op.line) + ": while loop without a constant trip count; counted " +
         std::to_string(o_.default_trip_count) + " time(s)");
    return o_.default_trip_count;
  }

  // case/if: the branch with the most FLOPs (then bytes) is the one counted.
  void run_branches(const ir::Op& op, Scope& s, size_t depth) {
    const size_t ops0 = a_.ops.size(), deps0 = a_.deps.size(), coll0 = a_.collectives.size();
    size_t best = 0;
    std::pair<double, double> best_cost{-1, -1};
    for (size_t r = 0; r < op.regions.size(); ++r) {
      run_region(op, op.regions[r], s, {}, depth);
      std::pair<double, double> cost{0, 0};
      for (size_t k = ops0; k < a_.ops.size(); ++k) cost.first += a_.ops[k].flops, cost.second += a_.ops[k].bytes;
      if (cost > best_cost) best_cost = cost, best = r;
      a_.ops.resize(ops0), a_.deps.resize(deps0), a_.dep_bytes.resize(deps0), a_.collectives.resize(coll0);
    }
    if (op.regions.size() > 1) warn(std::string(op.name) + ": the costliest branch is counted");
    bind_values(op, s, run_region(op, op.regions[best], s, {}, depth));
  }

  // mhlo.fusion: FLOPs of the fused ops, bytes of the fusion's operands and results only.
  void run_fusion(const ir::Op& op, Scope& s, size_t depth) {
    std::vector<Value> args = operands(op, s);
    const size_t ops0 = a_.ops.size(), deps0 = a_.deps.size(), coll0 = a_.collectives.size();
    run_region(op, op.regions[0], s, args, depth);
    if (a_.collectives.size() != coll0) {  // a collective inside: keep the ops as they are
      bind_results(op, s, static_cast<int64_t>(a_.ops.size()) - 1);
      return;
    }
    ExecOp e{};
    double best = -1;
    e.cls = OpClass::Elementwise;
    for (size_t k = ops0; k < a_.ops.size(); ++k) {
      e.flops += a_.ops[k].flops;
      if (a_.ops[k].flops > best && a_.ops[k].cls != OpClass::Free)
        best = a_.ops[k].flops, e.cls = a_.ops[k].cls, e.dtype = a_.ops[k].dtype, e.gemm = a_.ops[k].gemm;
    }
    a_.ops.resize(ops0);
    a_.deps.resize(deps0);
    a_.dep_bytes.resize(deps0);
    for (const Value& v : args) e.bytes += v.type->bytes();
    for (const TensorType& t : op.result_types) e.bytes += t.bytes();
    push(op, e, args, s);
  }

  uint32_t intern_name(std::string_view n) {
    auto it = name_ids_.find(n);
    if (it != name_ids_.end()) return it->second;
    a_.names.emplace_back(n);
    return name_ids_[n] = static_cast<uint32_t>(a_.names.size() - 1);
  }
  int32_t add_gemm(const GemmShape& g) {
    a_.gemms.push_back(g);
    return static_cast<int32_t>(a_.gemms.size() - 1);
  }
  uint8_t intern_dtype(const std::string& d) {
    for (size_t k = 0; k < a_.dtypes.size(); ++k)
      if (a_.dtypes[k] == d) return static_cast<uint8_t>(k);
    if (a_.dtypes.size() >= 255) return 0;
    a_.dtypes.push_back(d);
    return static_cast<uint8_t>(a_.dtypes.size() - 1);
  }

  void push(const ir::Op& op, ExecOp e, const std::vector<Value>& args, Scope& s,
            std::optional<int64_t> constant = {}) {
    if (a_.ops.size() >= o_.max_exec_ops)
      fail(op, "more than " + std::to_string(o_.max_exec_ops) + " ops after unrolling loops and inlining calls");
    e.name = intern_name(op.name);
    e.deps_begin = static_cast<uint32_t>(a_.deps.size());
    for (size_t k = 0; k < args.size(); ++k) {
      const Value& v = args[k];
      if (k < op.operands.size() &&
          std::find(op.operands.begin(), op.operands.begin() + k, op.operands[k]) != op.operands.begin() + k)
        continue;  // the same value twice is read once
      if (v.producer < 0) {
        e.arg_bytes += v.type->bytes();
        continue;
      }
      auto it = std::find(a_.deps.begin() + e.deps_begin, a_.deps.end(), v.producer);
      if (it == a_.deps.end()) {
        a_.deps.push_back(static_cast<uint32_t>(v.producer));
        a_.dep_bytes.push_back(v.type->bytes());
      } else {
        a_.dep_bytes[it - a_.deps.begin()] += v.type->bytes();
      }
    }
    e.deps_end = static_cast<uint32_t>(a_.deps.size());
    for (const TensorType& t : op.result_types) e.out_bytes += t.bytes();
    a_.ops.push_back(e);
    bind_results(op, s, static_cast<int64_t>(a_.ops.size()) - 1, constant);
  }

  void leaf(const ir::Op& op, Scope& s) {
    std::vector<Value> args = operands(op, s);
    ExecOp e{};
    e.cls = classify(op.name, op.callee);
    // Roofline element type: the widest operand (the result for ops without operands).
    const TensorType* widest = op.result_types.empty() ? &kNoType : &op.result_types[0];
    for (const Value& v : args)
      if (v.type->bits > widest->bits) widest = v.type;
    e.dtype = intern_dtype(widest->dtype);
    for (const Value& v : args)
      if (v.type->dynamic) warn(std::string(op.name) + ": dynamic dimensions are counted as 1");
    double in_bytes = 0, out_bytes = 0, out_elems = 0;
    for (const Value& v : args) in_bytes += v.type->bytes();
    for (const TensorType& t : op.result_types) out_bytes += t.bytes(), out_elems += t.elements();
    const std::string_view sn = short_name(op.name);
    std::optional<int64_t> constant;
    switch (e.cls) {
      case OpClass::Matmul: {
        if (args.size() < 2 || op.result_types.empty())
          fail(op, std::string(op.name) + " needs two operands and a result type");
        const TensorType& lhs = *args[0].type;
        std::vector<int64_t> contracting;
        if (uint32_t at = ir::find_attr(f_, op, "contracting_dims"))
          contracting = ir::int_list(f_, at);
        else if (uint32_t at2 = ir::find_attr(f_, op, "lhs_contracting_dimensions"))
          contracting = ir::int_list(f_, at2);
        else if (sn == "dot" && !lhs.dims.empty())
          contracting = {static_cast<int64_t>(lhs.dims.size()) - 1};
        double k = 1;
        for (int64_t c : contracting) {
          if (c < 0 || static_cast<size_t>(c) >= lhs.dims.size())
            fail(op, "contracting dimension " + std::to_string(c) + " out of range for the lhs type");
          k *= static_cast<double>(lhs.dims[c]);
        }
        std::vector<int64_t> batching;
        if (uint32_t at = ir::find_attr(f_, op, "batching_dims"))
          batching = ir::int_list(f_, at);
        else if (uint32_t at2 = ir::find_attr(f_, op, "lhs_batching_dimensions"))
          batching = ir::int_list(f_, at2);
        GemmShape g;
        for (int64_t b : batching)
          if (b >= 0 && static_cast<size_t>(b) < lhs.dims.size())
            g.batch *= static_cast<double>(std::max<int64_t>(lhs.dims[b], 1));
        g.k = std::max(k, 1.0);
        g.m = std::max(1.0, lhs.elements() / (g.batch * g.k));
        g.n = std::max(1.0, out_elems / (g.batch * g.m));
        e.gemm = add_gemm(g);
        e.flops = 2 * out_elems * k;
        e.bytes = in_bytes + out_bytes;
        break;
      }
      case OpClass::Convolution: {
        if (args.size() < 2 || op.result_types.empty()) fail(op, "convolution needs two operands and a result type");
        const TensorType& rhs = *args[1].type;
        const int o = kernel_output_dim(op);
        if (o < 0 || static_cast<size_t>(o) >= rhs.dims.size() || rhs.dims[o] == 0)
          fail(op, "convolution: cannot find the kernel's output-feature dimension in dim_numbers");
        e.flops = 2 * out_elems * (rhs.elements() / static_cast<double>(rhs.dims[o]));
        e.bytes = in_bytes + out_bytes;
        GemmShape g;
        g.n = static_cast<double>(rhs.dims[o]);
        g.k = std::max(1.0, rhs.elements() / g.n);
        g.m = std::max(1.0, out_elems / g.n);
        e.gemm = add_gemm(g);
        break;
      }
      case OpClass::Elementwise:
        e.flops = out_elems;
        e.bytes = in_bytes + out_bytes;
        break;
      case OpClass::Reduction: {
        if (sn == "reduce") {
          const size_t n = args.size() / 2;
          for (size_t k = 0; k < n && k < op.result_types.size(); ++k)
            e.flops += std::max(0.0, args[k].type->elements() - op.result_types[k].elements());
          e.bytes = out_bytes;
          for (size_t k = 0; k < n; ++k) e.bytes += args[k].type->bytes();
        } else if (sn == "reduce_window" || sn == "select_and_scatter") {
          double window = 1;
          for (int64_t w : ir::int_list(f_, ir::find_attr(f_, op, "window_dimensions")))
            window *= static_cast<double>(w);
          const double base = sn == "reduce_window" ? out_elems : (args.size() > 1 ? args[1].type->elements() : 0);
          e.flops = std::max(0.0, window - 1) * base;
          e.bytes = sn == "reduce_window"
                        ? (args.empty() ? 0 : args[0].type->bytes()) + out_bytes
                        : (args.size() > 1 ? args[0].type->bytes() + args[1].type->bytes() : 0) + out_bytes;
        } else {  // sort, top_k: n log n comparisons
          const double n = args.empty() ? 0 : args[0].type->elements();
          e.flops = n * std::log2(std::max(2.0, args.empty() || args[0].type->dims.empty()
                                                    ? 2.0
                                                    : static_cast<double>(args[0].type->dims.back())));
          e.bytes = in_bytes + out_bytes;
        }
        break;
      }
      case OpClass::DataMovement:
        if (in(sn, {"slice", "dynamic_slice", "real_dynamic_slice", "gather", "dynamic_gather", "torch_index_select"}))
          e.bytes = 2 * out_bytes;
        else if (sn == "dynamic_update_slice" && args.size() > 1)
          e.bytes = 2 * args[1].type->bytes();
        else
          e.bytes = in_bytes + out_bytes;
        break;
      case OpClass::Collective:
        e.collective = static_cast<int32_t>(a_.collectives.size());
        a_.collectives.push_back(make_collective(op, args));
        break;
      case OpClass::Free:
        constant = scalar_constant(f_, op);
        if (in(sn, {"get_tuple_element", "optimization_barrier", "custom_call", "sharding_constraint"})) {
          // Pass the operand's producer through: these do not compute.
          if (args.size() == op.results.size() || sn == "get_tuple_element") {
            for (size_t k = 0; k < op.results.size(); ++k) {
              Value v = args.empty() ? Value{} : args[std::min(k, args.size() - 1)];
              v.type = k < op.result_types.size() ? &op.result_types[k] : &kNoType;
              s.bind(op.results[k], v);
            }
            return;
          }
        }
        break;
      case OpClass::Unmodelled:
        warn(std::string("unmodelled op ") + std::string(op.name) +
             (op.callee.empty() ? "" : " @" + std::string(op.callee)) + " counted as free");
        break;
    }
    push(op, e, args, s, constant);
  }

  // Index of the kernel's output-feature dimension: `o` in `[0, 1, i, o]` of dim_numbers, or the
  // raw form's kernel_output_feature_dimension.
  int kernel_output_dim(const ir::Op& op) const {
    if (uint32_t at = ir::find_attr(f_, op, "kernel_output_feature_dimension"))
      return static_cast<int>(ir::int_list(f_, at).at(0));
    uint32_t at = ir::find_attr(f_, op, "dim_numbers");
    if (!at) at = ir::find_attr(f_, op, "dimension_numbers");
    if (!at) return -1;
    const std::vector<ir::Token>& t = f_.tokens;
    // Skip to the `x` between the input and kernel lists, then read the kernel list.
    uint32_t k = at;
    while (k < op.attr_end && !(t[k].is("x") && t[k + 1].is('['))) ++k;
    if (k >= op.attr_end) return -1;
    int index = 0;
    for (k += 2; k < op.attr_end && !t[k].is(']'); ++k) {
      if (t[k].is(','))
        ++index;
      else if (t[k].is("o"))
        return index;
    }
    return -1;
  }

  CollectiveOp make_collective(const ir::Op& op, const std::vector<Value>& args) {
    CollectiveOp c;
    c.kind = *collective_kind(op.name);
    c.line = op.line;
    for (const Value& v : args) c.operand_bytes += v.type->bytes();
    for (const TensorType& t : op.result_types) c.result_bytes += t.bytes();
    const int64_t P = a_.num_partitions, R = a_.num_replicas, N = P * R;
    int64_t channel = 0;
    if (uint32_t at = ir::find_attr(f_, op, "channel_handle")) {
      for (uint32_t k = at; k + 2 < op.attr_end && !f_.tokens[k].is('}'); ++k)
        if (f_.tokens[k].is("handle") && f_.tokens[k + 1].is('=')) {
          channel = std::strtoll(std::string(f_.tokens[k + 2].text).c_str(), nullptr, 10);
          break;
        }
    } else if (uint32_t at2 = ir::find_attr(f_, op, "channel_id")) {
      channel = std::strtoll(std::string(f_.tokens[at2].text).c_str(), nullptr, 10);
    }
    const bool global_ids = ir::has_word(f_, op, "use_global_device_ids");
    const bool all_style = c.kind == CollectiveKind::AllReduce || c.kind == CollectiveKind::AllGather ||
                           c.kind == CollectiveKind::ReduceScatter;
    enum class Mode { CrossReplica, CrossReplicaAndPartition, Flattened, CrossPartition } mode;
    if (all_style)
      mode = global_ids ? Mode::Flattened : channel > 0 ? Mode::CrossReplicaAndPartition : Mode::CrossReplica;
    else
      mode = channel > 0 ? Mode::CrossPartition : Mode::CrossReplica;
    if (!m_.declares_devices) mode = Mode::Flattened;  // ids are device ids; analyze() counted them
    auto check = [&](int64_t id, int64_t limit, const char* what) {
      if (id < 0 || id >= limit)
        fail(op, std::string(what) + " " + std::to_string(id) + " out of range: the module has " + std::to_string(P) +
                     " partition(s) x " + std::to_string(R) + " replica(s)");
    };
    const int64_t id_limit = mode == Mode::Flattened ? N : mode == Mode::CrossPartition ? P : R;

    if (c.kind == CollectiveKind::CollectivePermute) {
      std::vector<int64_t> flat = ir::int_list(f_, ir::find_attr(f_, op, "source_target_pairs"));
      if (flat.size() % 2) fail(op, "source_target_pairs must be a list of pairs");
      for (size_t k = 0; k + 1 < flat.size(); k += 2) {
        check(flat[k], id_limit, "device id"), check(flat[k + 1], id_limit, "device id");
        if (mode == Mode::CrossPartition)
          for (int64_t r = 0; r < R; ++r)
            c.pairs.emplace_back(uint32_t(r * P + flat[k]), uint32_t(r * P + flat[k + 1]));
        else
          for (int64_t p = 0; p < P; ++p)
            c.pairs.emplace_back(uint32_t(flat[k] * P + p), uint32_t(flat[k + 1] * P + p));
      }
      return c;
    }
    const uint32_t at = ir::find_attr(f_, op, "replica_groups");
    std::vector<std::vector<int64_t>> written;
    if (at && f_.tokens[at].kind == Tok::Hash) {
      warn(std::string(op.name) + ": replica_group_mesh_axes is not resolved; one group of all devices assumed");
    } else if (at) {
      std::vector<int64_t> flat = ir::int_list(f_, at);
      // The shape from `: tensor<GxSxi64>`, which also expands a splat dense<0>.
      const std::vector<int64_t> shape = ir::literal_shape(f_, op, at);
      if (shape.size() == 2) {
        const int64_t g = shape[0], size = shape[1];
        if (g < 0 || size < 0 || g * size > (int64_t{1} << 26)) fail(op, "implausible replica_groups shape");
        if (flat.size() == 1 && g * size > 1) flat.assign(static_cast<size_t>(g * size), flat[0]);
        if (static_cast<int64_t>(flat.size()) != g * size)
          fail(op, "replica_groups has " + std::to_string(flat.size()) + " ids for " +
                       with_article(std::to_string(g) + "x" + std::to_string(size) + " shape"));
        for (int64_t r = 0; r < g; ++r) written.emplace_back(flat.begin() + r * size, flat.begin() + (r + 1) * size);
      } else if (!flat.empty()) {
        written.push_back(flat);
      }
    }
    if (written.empty() || (written.size() == 1 && written[0].empty())) {  // empty: everyone
      written.assign(1, {});
      for (int64_t k = 0; k < id_limit; ++k) written[0].push_back(k);
    }
    c.group_size = static_cast<uint32_t>(written[0].size());
    for (const auto& g : written) {
      for (int64_t id : g)
        check(id, id_limit,
              mode == Mode::Flattened        ? "device id"
              : mode == Mode::CrossPartition ? "partition id"
                                             : "replica id");
      switch (mode) {
        case Mode::Flattened: c.groups.emplace_back(g.begin(), g.end()); break;
        case Mode::CrossReplica:
          for (int64_t p = 0; p < P; ++p) {
            c.groups.emplace_back();
            for (int64_t r : g) c.groups.back().push_back(uint32_t(r * P + p));
          }
          break;
        case Mode::CrossReplicaAndPartition:
          c.groups.emplace_back();
          for (int64_t r : g)
            for (int64_t p = 0; p < P; ++p) c.groups.back().push_back(uint32_t(r * P + p));
          break;
        case Mode::CrossPartition:
          for (int64_t r = 0; r < R; ++r) {
            c.groups.emplace_back();
            for (int64_t p : g) c.groups.back().push_back(uint32_t(r * P + p));
          }
          break;
      }
    }
    return c;
  }

  const ir::File& f_;
  const ir::Module& m_;
  Analysis& a_;
  const AnalyzeOptions& o_;
  std::unordered_map<std::string_view, uint32_t> name_ids_;
};

void walk_ops(const ir::Block& b, const std::function<void(const ir::Op&)>& fn) {
  for (const ir::Op& op : b.ops) {
    fn(op);
    for (const ir::Region& r : op.regions)
      for (const ir::Block& inner : r.blocks) walk_ops(inner, fn);
  }
}

}  // namespace

StaticStats static_stats(const Program& p) {
  const ir::File& f = *p.impl().file;
  StaticStats st;
  st.modules = f.modules.size();
  for (const ir::Module& m : f.modules)
    for (const ir::Func& fn : m.funcs)
      walk_ops(fn.body, [&](const ir::Op& op) {
        if (is_return(op.name)) return;
        ++st.ops[std::string(op.name)];
        const std::optional<CollectiveKind> k = collective_kind(op.name);
        if (!k) return;
        ++st.collectives[collective_kind_name(*k)];
        for (const TensorType& t : op.operand_types) st.collective_operand_bytes += t.bytes();
        if (*k == CollectiveKind::CollectivePermute) {
          ++st.group_sizes["None"];
          return;
        }
        const std::vector<int64_t> shape = ir::literal_shape(f, op, ir::find_attr(f, op, "replica_groups"));
        ++st.group_sizes[shape.size() == 2 ? std::to_string(shape[1]) : "None"];
      });
  return st;
}

Analysis analyze(const Program& p, size_t module, const AnalyzeOptions& options) {
  const ir::File& f = *p.impl().file;
  if (module >= f.modules.size())
    throw Error(f.name + ": module " + std::to_string(module) + " does not exist (the file has " +
                std::to_string(f.modules.size()) + ")");
  const ir::Module& m = f.modules[module];
  Analysis a;
  a.file = f.name;
  a.module = std::string(m.name);
  a.num_partitions = m.num_partitions;
  a.num_replicas = m.num_replicas;
  if (m.num_partitions * m.num_replicas > (1 << 20)) throw Error(f.name + ": module declares more than 2^20 devices");
  a.devices = static_cast<uint32_t>(m.num_partitions * m.num_replicas);
  if (!m.declares_devices) {
    int64_t max_id = 0;
    for (const ir::Func& fn : m.funcs)
      walk_ops(fn.body, [&](const ir::Op& op) {
        if (!collective_kind(op.name)) return;
        for (const char* key : {"replica_groups", "source_target_pairs"})
          for (int64_t id : ir::int_list(f, ir::find_attr(f, op, key))) max_id = std::max(max_id, id);
      });
    if (max_id >= (1 << 20))
      throw Error(f.name + ": device id " + std::to_string(max_id) + " in module '" + a.module + "' is implausible");
    if (max_id > 0) {
      a.num_partitions = max_id + 1;
      a.devices = static_cast<uint32_t>(max_id + 1);
      a.warnings.push_back("module '" + a.module + "' declares no mhlo.num_partitions/num_replicas; " +
                           std::to_string(a.devices) + " devices inferred from its replica groups");
    }
  }
  const ir::Func* entry = nullptr;
  for (const ir::Func& fn : m.funcs)
    if (fn.name == "main" && fn.has_body) entry = &fn;
  for (const ir::Func& fn : m.funcs)
    if (!entry && fn.is_public && fn.has_body) entry = &fn;
  if (!entry) throw Error(f.name + ": module '" + a.module + "' has no @main or public function to run");
  Executor(f, m, a, options).run(*entry);
  // Communicator ids in order of first use; a group of one device talks to nobody and gets none.
  std::map<std::vector<uint32_t>, uint32_t> ids;
  for (CollectiveOp& c : a.collectives)
    for (const auto& g : c.groups)
      c.group_ids.push_back(g.size() > 1 ? ids.emplace(g, static_cast<uint32_t>(ids.size()) + 1).first->second : 0);
  count_kernels(a);
  if (options.fuse_elementwise && f.text.find("mhlo.fusion") == std::string::npos) fuse_elementwise(a);
  for (const ExecOp& e : a.ops) {
    OpTotals& n = a.by_name[a.names[e.name]];
    OpTotals& c = a.by_class[int(e.cls)];
    ++n.count, ++c.count;
    n.kernels += e.kernels, c.kernels += e.kernels;
    n.flops += e.flops, c.flops += e.flops;
    n.bytes += e.bytes, c.bytes += e.bytes;
  }
  bool collectives = !a.collectives.empty();
  if (!collectives && a.devices > 1 && f.text.find("mhlo.sharding") != std::string::npos &&
      f.text.find("SPMDFullToShardShape") == std::string::npos)
    a.warnings.push_back(
        "the module declares " + std::to_string(a.devices) +
        " devices and shardings but has no collectives: a global-view program? Communication is not modelled");
  return a;
}

}  // namespace chakra::stablehlo
