// chakra synth: per-rank traces of an LLM training or inference step (STAGE-like), written in parallel.
#include <iostream>

#include "chakra/support/error.h"
#include "chakra/synth/synth.h"
#include "chakra/support/text.h"
#include "cli.h"
#include "commands.h"

using namespace chakra::synth;

namespace {

template <typename T>
T choice(const cli::Args& a, const std::string& option, std::initializer_list<std::pair<const char*, T>> values) {
  std::string known;
  for (const auto& [name, value] : values) {
    if (a.get(option) == name) return value;
    known += (known.empty() ? "" : ", ") + std::string(name);
  }
  a.fail(option + ": unknown value '" + a.get(option) + "' (" + known + ")");
}

SynthOptions options_from(const cli::Args& a) {
  SynthOptions o;
  if (a.has("--preset"))
    apply_preset(a.get("--preset"), o);
  else if (!a.has("--model"))
    a.fail("give --model or --preset");
  if (a.has("--model"))
    o.model = choice<ModelKind>(a, "--model",
                                {{"gpt", ModelKind::Gpt}, {"llama", ModelKind::Llama}, {"moe", ModelKind::Moe}});
  auto set = [&](const char* option, uint64_t& field) {
    if (a.has(option)) field = a.get_uint(option);
  };
  ModelShape& s = o.shape;
  set("--layers", s.layers);
  set("--hidden", s.hidden);
  set("--ffn", s.ffn);
  set("--heads", s.heads);
  set("--kv-heads", s.kv_heads);
  set("--vocab", s.vocab);
  set("--seq", s.seq);
  set("--batch", s.batch);
  set("--micro-batches", s.micro_batches);
  set("--experts", s.experts);
  set("--top-k", s.top_k);
  Parallelism& p = o.par;
  p.dp = a.get_uint("--dp");
  p.tp = a.get_uint("--tp");
  p.pp = a.get_uint("--pp");
  p.sp = a.get_uint("--sp");
  p.ep = a.get_uint("--ep");
  p.fsdp = a.has("--fsdp");
  p.sequence_parallel = !a.has("--no-sequence-parallel");
  if (a.has("--rank-order")) p.rank_order = parse_rank_order(a.get("--rank-order"));
  o.recompute = a.has("--recompute");
  o.schedule = choice<Schedule>(a, "--schedule",
                                {{"1f1b", Schedule::OneFOneB}, {"gpipe", Schedule::GPipe}, {"none", Schedule::None}});
  o.attention = choice<Attention>(a, "--attention", {{"fused", Attention::Fused}, {"full", Attention::Full}});
  o.step = choice<Step>(a, "--step", {{"train", Step::Train}, {"prefill", Step::Prefill}, {"decode", Step::Decode}});
  o.stage_units = a.has("--stage-units");
  o.dtype_bytes = static_cast<uint32_t>(a.get_uint("--dtype-bytes", 64));
  o.grad_sync_per_micro_batch = a.has("--grad-sync-per-micro-batch");
  o.stage_expert_tokens = a.has("--stage-expert-tokens");
  if (a.has("--stage-compat")) {
    if (a.has("--schedule")) a.fail("--stage-compat implies --schedule none");
    o.stage_units = true;
    o.grad_sync_per_micro_batch = true;
    o.stage_expert_tokens = true;
    o.schedule = Schedule::None;
  }
  return o;
}

int run_synth(const cli::Args& a) {
  if (a.has("--list-presets")) {
    for (const std::string& n : preset_names()) std::cout << n << "\n";
    return cli::kOk;
  }
  if (!a.has("--output")) a.fail("--output PREFIX is required");
  const SynthOptions o = options_from(a);
  const std::string prefix = a.get("--output");
  std::shared_ptr<const Workload> w = synthesize(o);
  const uint32_t ranks = num_ranks(*w);
  const std::string groups_path = a.has("--comm-groups") ? a.get("--comm-groups") : prefix + ".comm_group.json";
  cli::write_rank_traces(
      prefix, ranks, [&](size_t r, chakra::Trace& trace) { rank_trace(*w, static_cast<uint32_t>(r), trace); },
      groups_path, comm_groups(*w));
  std::cerr << "chakra synth: " << ranks << " ranks (" << num_stages(*w) << " pipeline stage"
            << (num_stages(*w) > 1 ? "s" : "") << ", ";
  for (uint32_t s = 0; s < num_stages(*w); ++s) std::cerr << (s ? "/" : "") << stage_nodes(*w, s);
  std::cerr << " nodes per rank) -> " << prefix << ".{0.." << ranks - 1 << "}.et, comm groups -> " << groups_path
            << "\n";
  for (uint32_t s = 0; s < num_stages(*w); ++s) {
    const MemoryEstimate m = memory_estimate(*w, s);
    std::cerr << "  memory per rank" << (num_stages(*w) > 1 ? " of stage " + std::to_string(s) : std::string())
              << " (estimate): " << chakra::format_bytes(m.total()) << " = weights " << chakra::format_bytes(m.weights);
    if (o.step == Step::Train)
      std::cerr << " + gradients " << chakra::format_bytes(m.gradients) << " + optimizer "
                << chakra::format_bytes(m.optimizer);
    else
      std::cerr << " + KV cache " << chakra::format_bytes(m.kv_cache);
    std::cerr << " + activations " << chakra::format_bytes(m.activations) << "\n";
  }
  return cli::kOk;
}

}  // namespace

int cmd_synth(int argc, char** argv) {
  cli::Args args("chakra synth",
                 "Synthetic per-rank traces of one LLM training step (forward, backward, optimizer)\n"
                 "or inference step (prefill of the prompts, or decoding one token per sequence)\n"
                 "under data, tensor (+sequence), pipeline, context, expert and fully sharded data\n"
                 "parallelism, STAGE-like: PREFIX.{rank}.et and the comm-group JSON. Compute nodes\n"
                 "carry num_ops and tensor_size (simulate with \"roofline-enabled\": 1). Ranks are\n"
                 "numbered dp fastest, then tp, sp, ep, pp (--rank-order).");
  args.option("--preset", "NAME", "model shape preset (--list-presets); options given override it");
  args.flag("--list-presets", "print the preset names and exit");
  args.option("--model", "KIND", "gpt (2-matrix FFN), llama (SwiGLU, grouped-query attention) or moe");
  args.option("--layers", "N", "transformer blocks (default 80)");
  args.option("--hidden", "N", "model width (default 8192)");
  args.option("--ffn", "N", "FFN width (default 28672)");
  args.option("--heads", "N", "attention heads (default 64)");
  args.option("--kv-heads", "N", "key/value heads (default: --heads)");
  args.option("--vocab", "N", "vocabulary size (default 32000)");
  args.option("--step", "S",
              "train, prefill (the forward over each prompt, its last token's logits) or decode "
              "(one new token per sequence against a KV cache of --seq tokens)",
              "train");
  args.option("--seq", "N", "sequence length; with --step decode, the tokens already cached (default 1024)");
  args.option("--batch", "N", "global batch in sequences (default 64)");
  args.option("--micro-batches", "N", "micro-batches per step (default 1)");
  args.option("--experts", "N", "MoE experts (default 8)");
  args.option("--top-k", "N", "MoE experts per token (default 2)");
  args.option("--dp", "N", "data parallel degree", "1");
  args.option("--tp", "N", "tensor parallel degree", "1");
  args.option("--pp", "N", "pipeline stages", "1");
  args.option("--sp", "N", "context (sequence) parallel degree", "1");
  args.option("--ep", "N", "expert parallel degree (moe)", "1");
  args.option("--rank-order", "ORDER",
              "how ranks of a pipeline stage are numbered, fastest first: dp,tp,sp,ep (STAGE's, the default) or "
              "e.g. tp,sp,ep,dp (Megatron-LM's: tensor-parallel groups on consecutive ranks)");
  args.flag("--fsdp", "shard block weights and gradients over dp (ZeRO-3)");
  args.flag("--no-sequence-parallel", "tensor parallel with all-reduces instead of all-gather/reduce-scatter");
  args.flag("--recompute", "recompute each block's forward before its backward");
  args.option("--schedule", "S", "pipeline order as ctrl_deps: 1f1b, gpipe or none", "1f1b");
  args.option("--attention", "A", "attention cost: fused (STAGE's linear kernel) or full (S^2 matmuls)", "fused");
  args.option("--dtype-bytes", "N", "bytes per element for comm_size and tensor_size", "2");
  args.flag("--stage-units", "STAGE's units: num_ops in multiply-adds, sizes in elements");
  args.flag("--grad-sync-per-micro-batch", "synchronise block gradients after every micro-batch, as STAGE does");
  args.flag("--stage-expert-tokens", "give each MoE expert 1/ep of its tokens, as STAGE does");
  args.flag("--stage-compat",
            "STAGE's output: --stage-units --grad-sync-per-micro-batch --stage-expert-tokens --schedule none");
  args.option("--output", "PREFIX", "write PREFIX.{rank}.et");
  args.alias("-o", "--output");
  args.option("--comm-groups", "FILE", "comm-group JSON (default PREFIX.comm_group.json)");
  args.parse(argc, argv);
  return cli::run_guarded("chakra synth", run_synth, args);
}

CHAKRA_COMMAND(150, "synth", cmd_synth,
               "synthetic per-rank traces of LLM training (GPT/Llama/MoE x DP/TP/PP/SP/EP/FSDP)");
