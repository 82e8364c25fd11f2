// chakra: command-line front end of chakrakit. Dispatches on the subcommand, or on the name it
// was started under for the drop-in replacements of the reference tools (chakra_jsonizer, ...);
// each command's file registers itself (commands.h).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli.h"
#include "commands.h"

namespace {

std::vector<CommandEntry>& registry() {
  static std::vector<CommandEntry> entries;
  return entries;
}

void print_help() {
  std::cout << "chakra " << CHAKRA_VERSION << " - Chakra execution trace toolkit\n\n"
            << "usage: chakra <command> [options] ...\n\ncommands:\n";
  for (const CommandEntry& c : registered_commands()) {
    if (!c.summary) continue;
    std::string name = c.name;
    name.resize(12, ' ');
    std::cout << "  " << name << c.summary << "\n";
  }
  std::cout << "\n'chakra <command> --help' describes a command's options.\n"
            << "Drop-in names of the reference tools (mlcommons/chakra, ASTRA-sim; links to this binary):";
  for (const CommandEntry& c : registered_commands())
    if (!c.summary) std::cout << " " << c.name;
  std::cout << "\n";
}

// Huge pages make building whole traces faster; a command that streams keeps a small footprint
// instead (a 2 MiB page for a few kilobytes would be most of its memory). `whole` is main's argv.
int run(const CommandEntry& c, int argc, char** argv, char** whole) {
  if (c.streams == Streams::No) {
    cli::reexec_with_huge_page_malloc(whole);
    cli::back_heap_with_huge_pages();
  }
  return c.run(argc, argv);
}

}  // namespace

CommandRegistration::CommandRegistration(CommandEntry entry) { registry().push_back(entry); }

int run_command(const char* name, int argc, char** argv) {
  for (const CommandEntry& c : registered_commands())
    if (!std::strcmp(c.name, name)) return c.run(argc, argv);
  std::cerr << "chakra: no command '" << name << "' registered\n";
  return cli::kUsage;
}

const std::vector<CommandEntry>& registered_commands() {
  // Commands by their order, then aliases by name: registration runs in no fixed order.
  static const std::vector<CommandEntry> sorted = [] {
    std::vector<CommandEntry> all = registry();
    std::sort(all.begin(), all.end(), [](const CommandEntry& a, const CommandEntry& b) {
      if (!a.summary != !b.summary) return a.summary != nullptr;
      return a.summary ? a.order < b.order : std::strcmp(a.name, b.name) < 0;
    });
    return all;
  }();
  return sorted;
}

int main(int argc, char** argv) {
  cli::install_interrupt_handler();
  std::string_view self = argv[0];
  if (auto slash = self.rfind('/'); slash != std::string_view::npos) self = self.substr(slash + 1);
  for (const CommandEntry& c : registered_commands())
    if (!c.summary && self == c.name) return run(c, argc - 1, argv + 1, argv);

  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "help")) {
    print_help();
    return argc < 2 ? cli::kUsage : cli::kOk;
  }
  if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "version")) {
    std::cout << "chakra " << CHAKRA_VERSION << "\n";
    return cli::kOk;
  }
  for (const CommandEntry& c : registered_commands())
    if (!std::strcmp(argv[1], c.name)) return run(c, argc - 2, argv + 2, argv);
  std::cerr << "chakra: unknown command '" << argv[1] << "' (see chakra --help)\n";
  return cli::kUsage;
}
