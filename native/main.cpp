// chakra: command-line front end of chakrakit. Dispatches on the subcommand, or on the name it
// was started under for the drop-in replacements of the reference tools (chakra_jsonizer, ...).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>

#include "cli.h"
#include "commands.h"

#if defined(__GLIBC__) && !defined(__EMSCRIPTEN__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace {

// On virtual machines the first touch of each 4 KiB page costs several microseconds: a quarter
// of a conversion's time went there. A 2 MiB transparent huge page costs about as much as a few
// of them. Columns map their large blocks in huge pages themselves; this puts the malloc heap
// (strings, vectors, small columns) on them too. glibc is told to grow the heap 64 MiB at a time
// and to serve blocks of up to 32 MiB from it (not from fresh mappings); the heap is grown once
// now and that stretch is marked for huge pages. Only a hint: without THP nothing changes.
void back_heap_with_huge_pages() {
#if defined(__GLIBC__) && !defined(__EMSCRIPTEN__) && defined(MADV_HUGEPAGE)
  constexpr size_t kPad = size_t{64} << 20, kProbe = size_t{64} << 10;
  if (!mallopt(M_MMAP_THRESHOLD, 32 << 20) || !mallopt(M_TOP_PAD, kPad)) return;
  char* const before = static_cast<char*>(sbrk(0));
  // Small blocks until one does not fit the heap's free top: that one grows it by the pad.
  void* probes[64];
  int n = 0;
  while (n < 64 && static_cast<char*>(sbrk(0)) == before) probes[n++] = std::malloc(kProbe);
  char* const after = static_cast<char*>(sbrk(0));
  for (int i = 0; i < n; ++i) std::free(probes[i]);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(before) + page - 1) & ~(page - 1);
  if (reinterpret_cast<uintptr_t>(after) > begin)
    madvise(reinterpret_cast<void*>(begin), reinterpret_cast<uintptr_t>(after) - begin, MADV_HUGEPAGE);
#endif
}

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
  bool streams = false;  // holds one record at a time: no huge-page heap (see main)
};

constexpr Command kCommands[] = {
    {"info", cmd_info, "summarise traces: node types, collectives, bytes, attributes, dependencies"},
    {"validate", cmd_validate, "check traces for what makes simulators abort, hang or misread them"},
    {"jsonize", cmd_jsonize, "write a trace as JSON (document, JSON Lines, or the reference jsonizer's bytes)", true},
    {"dejsonize", cmd_dejsonize, "build a .et trace from JSON (edit traces as text)"},
    {"link", cmd_link, "PyTorch host execution trace + Kineto trace -> linked JSON (ET+)"},
    {"convert", cmd_convert, "PyTorch execution traces or ASTRA-sim 1.0 text workloads -> .et"},
    {"visualize", cmd_visualize, "dependency graph as DOT, GraphML or SVG (our own layout, no Graphviz)"},
    {"timeline", cmd_timeline, "ASTRA-sim issue/callback log -> Chrome trace JSON (Perfetto, chrome://tracing)"},
    {"analyze", cmd_analyze, "HTA's analyses of measured GPU work: temporal breakdown, overlap, kernels, idle time"},
    {"anonymize", cmd_anonymize, "copies of traces with names, schemas and strings replaced by keyed tokens, to share"},
    {"project", cmd_project, "a workload traced on N ranks as it would run on M (data parallelism), to simulate"},
    {"diff", cmd_diff, "two traces op by op: count and time per name in each, the difference, new and gone names"},
    {"simulate", cmd_simulate, "replay per-NPU traces on ASTRA-sim's analytical network model (same numbers)"},
    {"sweep", cmd_sweep, "simulate every point of a design-space sweep (here, as shards, or on Slurm) into one table"},
    {"synth", cmd_synth, "synthetic per-rank traces of LLM training (GPT/Llama/MoE x DP/TP/PP/SP/EP/FSDP)"},
    {"import", cmd_import, "per-device traces from a StableHLO program (compute regions, collectives, groups)"},
    {"predict", cmd_predict, "step time of a StableHLO program on a device and network (roofline + simulation)"},
    {"view", cmd_view, "serve the web page on 127.0.0.1 and open it with the given traces preloaded"},
    {"generate", cmd_generate, "synthetic traces: the reference microbenchmarks, or one collective per NPU"},
};

// Names under which the binary replaces a reference tool (installed as links to `chakra`).
struct Alias {
  const char* name;
  int (*run)(int, char**);
  bool streams = false;
};
constexpr Alias kAliases[] = {
    {"chakra_jsonizer", cmd_reference_jsonizer, true},
    {"chakra_trace_link", cmd_reference_trace_link},
    {"chakra_converter", cmd_reference_converter},
    {"chakra_generator", cmd_reference_generator},
    {"chakra_timeline_visualizer", cmd_reference_timeline},
    {"chakra_visualizer", cmd_reference_visualizer},
    {"AstraSim_Analytical_Congestion_Unaware", cmd_reference_unaware},
    {"AstraSim_Analytical_Congestion_Aware", cmd_reference_aware},
};

void print_help() {
  std::cout << "chakra " << CHAKRA_VERSION << " - Chakra execution trace toolkit\n\n"
            << "usage: chakra <command> [options] ...\n\ncommands:\n";
  for (const Command& c : kCommands) {
    std::string name = c.name;
    name.resize(12, ' ');
    std::cout << "  " << name << c.summary << "\n";
  }
  std::cout << "\n'chakra <command> --help' describes a command's options.\n"
            << "Drop-in names of the reference tools (mlcommons/chakra, ASTRA-sim; links to this binary):";
  for (const Alias& a : kAliases) std::cout << " " << a.name;
  std::cout << "\n";
}

// Huge pages make building whole traces faster; a command that streams keeps a small footprint
// instead (a 2 MiB page for a few kilobytes would be most of its memory).
int run(int (*command)(int, char**), bool streams, int argc, char** argv) {
  if (!streams) back_heap_with_huge_pages();
  return command(argc, argv);
}

}  // namespace

int main(int argc, char** argv) {
  cli::install_interrupt_handler();
  std::string_view self = argv[0];
  if (auto slash = self.rfind('/'); slash != std::string_view::npos) self = self.substr(slash + 1);
  for (const Alias& a : kAliases)
    if (self == a.name) return run(a.run, a.streams, argc - 1, argv + 1);

  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "help")) {
    print_help();
    return argc < 2 ? cli::kUsage : cli::kOk;
  }
  if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "version")) {
    std::cout << "chakra " << CHAKRA_VERSION << "\n";
    return cli::kOk;
  }
  for (const Command& c : kCommands)
    if (!std::strcmp(argv[1], c.name)) return run(c.run, c.streams, argc - 2, argv + 2);
  for (const Alias& a : kAliases)
    if (!std::strcmp(argv[1], a.name)) return run(a.run, a.streams, argc - 2, argv + 2);
  std::cerr << "chakra: unknown command '" << argv[1] << "' (see chakra --help)\n";
  return cli::kUsage;
}
