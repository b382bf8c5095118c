// The literal table of the log scanner: every string whose presence makes a line worth a
// closer look, what it means, and which triage class it proves. The texts come from
// reference/maxtext-slurm.md §3 (launcher, MaxText, JAX, RCCL/NCCL, ROCm/CUDA, Slurm,
// Ray) plus the PyTorch/CUDA equivalents. Known-harmless lines (§3.7) are listed
// separately: a candidate line that contains one of them never counts as a failure.
#pragma once
#include <string_view>
#include <vector>

namespace mt::tools {

// What the scanner does with a line that contains the literal.
enum class LineAction {
  kStep,               // completed step: …
  kNodeExit,           // NODE_EXIT host=… exit=…
  kSummary,            // ===== JOB SUMMARY =====
  kStage,              // == <Desc> BEGIN|END|TIMEOUT|FAILED …
  kMemstats,           // Memstats: After params initialized:
  kMemstatsLine,       // \tUsing (GB) …
  kConfig,             // Config param <name>: <value>
  kBarrier,            // Synchronizing hosts before training loop
  kHeartbeat,          // … stopped sending heartbeats
  kTaskRef,            // /job:jax_worker/replica:0/task:<N>
  kOwnDeath,           // a task reporting its own termination by the coordination service
  kHeartbeatTimeout,   // a configured heartbeat timeout value
  kRcclWave,           // init.cc … NCCL WARN MSCCL++ (communicator init, benign)
  kCheckpointSaved,    // Saved a checkpoint at step N
  kRestore,            // restoring from this run's directory step N
  kSingleReplica,      // single-replica checkpoint restore machinery
  kRay,                // MaxTextTrainerActor
  kPrometheus,         // [Prometheus] Started on port P
  kSlurmCancel,        // *** JOB … CANCELLED AT … [DUE TO …] ***
  kSrunExit,           // srun: error: host: task N: Exited with exit code C
  kTraceback,          // Traceback (most recent call last):
  kJobEnd,             // a launcher's end line: Job end: … (exit code N), XPK End, EXIT_CODE=N
  kTrainingEnd,        // the training loop says it finished (then teardown follows)
  kSignature,          // a failure signature: records `kind`, proves `cls`
  kBenign,             // a known-harmless line (§3.7): never a failure, whatever else it says
};

// Extra checks a signature needs beyond containing its literal.
enum class Refine {
  kNone,
  kKilledLine,         // the shell's "Killed" job-status line, not any use of the word
  kNotCuInit,          // not the harmless CUDA probe on ROCm, not a CUDA OOM
  kNotOom,             // a generic GPU runtime error that is not an out-of-memory
  kRocdeviceAbort,     // rocdevice.cpp … Aborting
  kXlaFlag,            // Unknown flag … --xla
  kNonZeroSubprocess,  // Training subprocess exited with code != 0
  kNcclFatal,          // NCCL FATAL other than the socket-interface detection
  kDeadline,           // a deadline or timeout is what failed (DEADLINE_EXCEEDED, timed out)
  kTaskLaunch,         // Slurm: Task launch for … failed on node …
  kNotASetting,        // an event, not a configuration print ("heartbeat timeout: 100")
  kNotHostMemory,      // a device OOM, not Ray's host-memory OutOfMemoryError
  kNotPeerLost,        // a transport error other than the peer going away (that is peer_lost)
};

struct LineSignature {
  std::string_view literal;
  LineAction action;
  std::string_view kind;   // stable id reported in evidence
  std::string_view cls;    // triage class proven (kSignature only)
  Refine refine = Refine::kNone;
};

const std::vector<LineSignature>& LineSignatures();

// Substrings of known-harmless lines (the kBenign literals of the table).
std::vector<std::string_view> BenignMarkers();

}  // namespace mt::tools
