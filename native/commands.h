// Entry points of the `chakra` subcommands; argv excludes the program and command names.
#pragma once

int cmd_info(int argc, char** argv);
int cmd_validate(int argc, char** argv);
int cmd_jsonize(int argc, char** argv);
int cmd_dejsonize(int argc, char** argv);
int cmd_reference_jsonizer(int argc, char** argv);
int cmd_link(int argc, char** argv);
int cmd_view(int argc, char** argv);
int cmd_reference_trace_link(int argc, char** argv);
int cmd_convert(int argc, char** argv);
int cmd_reference_converter(int argc, char** argv);
int cmd_generate(int argc, char** argv);
int cmd_reference_generator(int argc, char** argv);
int cmd_timeline(int argc, char** argv);
int cmd_reference_timeline(int argc, char** argv);
int cmd_visualize(int argc, char** argv);
int cmd_reference_visualizer(int argc, char** argv);
int cmd_analyze(int argc, char** argv);
int cmd_diff(int argc, char** argv);
int cmd_simulate(int argc, char** argv);
int cmd_reference_unaware(int argc, char** argv);
int cmd_reference_aware(int argc, char** argv);
int cmd_synth(int argc, char** argv);
int cmd_anonymize(int argc, char** argv);
int cmd_project(int argc, char** argv);
int cmd_sweep(int argc, char** argv);
int cmd_import(int argc, char** argv);
int cmd_predict(int argc, char** argv);
