// PyTorch's JSON traces anonymized as they stream (`chakra anonymize` on a run folder or on JSON
// files), with the tokens of chakra/trace/anonymize.h, so a rank's host ET and Kineto trace
// anonymized under one key still link, convert and analyze to the same numbers.
//
// Host ET and linked JSON: each node's name as Anonymizer::name makes it (the Kineto trace's
// names the same way: the linker pairs ops by id and checks their names agree), its tensor types
// kept, shapes kept (or bucketed), a process_group:init node's groups keep their ids and ranks,
// `cat` kept when it is one of Kineto's categories, the top-level `schema` kept; every other
// string a token unless it holds numbers only (deny by default).
//
// Kineto: the structure the linker, the analyses and trace viewers (Perfetto) read is kept:
// every event's `ph`, `ts`, `dur`, numeric `pid`/`tid`/`id`, `bp`/`s`, Kineto's categories, every
// number in `args` (External id, Record function id, correlation, stream, device, Ev Idx, grid,
// Input Dims, ...), the args that are enumerations (`Input type`, `dtype`, `cuda_sync_kind`,
// `Collective name`), device and stream labels ("GPU 0", "stream 7"), the top-level numbers
// (`distributedInfo` rank and world size, `deviceProperties`) and `displayTimeUnit`. Replaced:
// event names (as above), other strings in args (Call stack, Module Hierarchy, kernel files,
// process and thread names, process-group descriptions), string pids/tids/ids, the trace's
// name, host and user names, the GPU's name. Object keys are kept: they are the profiler's own.
#pragma once

#include <memory>

#include "chakra/format/io.h"
#include "chakra/trace/anonymize.h"

namespace chakra {

enum class PytorchJsonKind { HostEt, Kineto };

// `in` anonymized into `out` (compact JSON). Throws chakra::Error naming the input and where for
// text that is not JSON, nested deeper than the JSON reader takes (512 levels), or neither a
// host ET ("nodes") nor a Kineto trace ("traceEvents"). Thread-safe for distinct inputs.
PytorchJsonKind anonymize_pytorch_json(const Anonymizer& anonymizer, std::unique_ptr<ByteSource> in, ByteSink& out,
                                       AnonymizeReport& report);

}  // namespace chakra
