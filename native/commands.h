// The `chakra` subcommands and the reference tools' names the binary answers to: each command's
// file registers it with one line (CHAKRA_COMMAND / CHAKRA_ALIAS at its end), main.cpp dispatches
// over what registered. Entry points take argv without the program and command names.
#pragma once

#include <vector>

enum class Streams { No, Yes };  // Yes: holds one record at a time, so no huge-page heap (main.cpp)

struct CommandEntry {
  int order;  // place in `chakra --help` (commands); aliases keep their registration order
  const char* name;
  int (*run)(int argc, char** argv);
  const char* summary;  // nullptr for an alias (a reference tool's name)
  Streams streams;
};

// Every registered command (summary set) and alias, commands in `order`.
const std::vector<CommandEntry>& registered_commands();
// Runs the registered command `name` (a command that hands over to another, as project to synth).
int run_command(const char* name, int argc, char** argv);

struct CommandRegistration {
  CommandRegistration(CommandEntry entry);
};

#define CHAKRA_REGISTRATION_NAME2(line) chakra_command_registration_##line
#define CHAKRA_REGISTRATION_NAME(line) CHAKRA_REGISTRATION_NAME2(line)
#define CHAKRA_COMMAND(order, name, run, summary, ...) \
  static const CommandRegistration CHAKRA_REGISTRATION_NAME(__LINE__)({order, name, run, summary, Streams{__VA_ARGS__}})
#define CHAKRA_ALIAS(name, run, ...) \
  static const CommandRegistration CHAKRA_REGISTRATION_NAME(__LINE__)({0, name, run, nullptr, Streams{__VA_ARGS__}})
