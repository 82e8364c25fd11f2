// chakra: command-line front end of chakrakit. Dispatches on the subcommand, or on the name it
// was started under for the drop-in replacements of the reference tools (chakra_jsonizer, ...).
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>

#include "cli.h"
#include "commands.h"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

constexpr Command kCommands[] = {
    {"info", cmd_info, "summarise traces: node types, collectives, bytes, attributes, dependencies"},
    {"validate", cmd_validate, "check traces for what makes simulators abort, hang or misread them"},
    {"jsonize", cmd_jsonize, "write a trace as JSON (document, JSON Lines, or the reference jsonizer's bytes)"},
    {"dejsonize", cmd_dejsonize, "build a .et trace from JSON (edit traces as text)"},
    {"link", cmd_link, "PyTorch host execution trace + Kineto trace -> linked JSON (ET+)"},
    {"convert", cmd_convert, "PyTorch execution traces or ASTRA-sim 1.0 text workloads -> .et"},
    {"visualize", cmd_visualize, "dependency graph as DOT, GraphML or SVG (our own layout, no Graphviz)"},
    {"timeline", cmd_timeline, "ASTRA-sim issue/callback log -> Chrome trace JSON (Perfetto, chrome://tracing)"},
    {"simulate", cmd_simulate, "replay per-NPU traces on ASTRA-sim's analytical network model (same numbers)"},
    {"synth", cmd_synth, "synthetic per-rank traces of LLM training (GPT/Llama/MoE x DP/TP/PP/SP/EP/FSDP)"},
    {"import", cmd_import, "per-device traces from a StableHLO program (compute regions, collectives, groups)"},
    {"predict", cmd_predict, "step time of a StableHLO program on a device and network (roofline + simulation)"},
    {"generate", cmd_generate, "synthetic traces: the reference microbenchmarks, or one collective per NPU"},
};

// Names under which the binary replaces a reference tool (installed as links to `chakra`).
struct Alias {
  const char* name;
  int (*run)(int, char**);
};
constexpr Alias kAliases[] = {
    {"chakra_jsonizer", cmd_reference_jsonizer},
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

}  // namespace

int main(int argc, char** argv) {
  cli::install_interrupt_handler();
  std::string_view self = argv[0];
  if (auto slash = self.rfind('/'); slash != std::string_view::npos) self = self.substr(slash + 1);
  for (const Alias& a : kAliases)
    if (self == a.name) return a.run(argc - 1, argv + 1);

  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "help")) {
    print_help();
    return argc < 2 ? cli::kUsage : cli::kOk;
  }
  if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "version")) {
    std::cout << "chakra " << CHAKRA_VERSION << "\n";
    return cli::kOk;
  }
  for (const Command& c : kCommands)
    if (!std::strcmp(argv[1], c.name)) return c.run(argc - 2, argv + 2);
  for (const Alias& a : kAliases)
    if (!std::strcmp(argv[1], a.name)) return a.run(argc - 2, argv + 2);
  std::cerr << "chakra: unknown command '" << argv[1] << "' (see chakra --help)\n";
  return cli::kUsage;
}
