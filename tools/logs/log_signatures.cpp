#include "tools/logs/log_signatures.h"

#include <iterator>

namespace mt::tools {

namespace {

using A = LineAction;
using R = Refine;

// The table itself: data at namespace scope (constant-initialized), in the order whose
// indices the scanner's literal ids are.
constexpr LineSignature kLineSignatures[] = {
    // Progress and structure.
    {"completed step:", A::kStep, "step", ""},
    // Other frameworks' progress lines (progress_formats.h): a prefilter per family. "tep"
    // is short and slows the prefilter (its skip distance is the shortest literal less 2):
    // the scanner drops literals under kFastLiteral bytes once the log's progress format
    // is known to need none of them (log_scanner.cpp, ScanLiterals).
    {"tep", A::kStep, "step", ""},
    {"elapsed time per iteration", A::kStep, "step", ""},
    {"Progress on:", A::kStep, "step", ""},
    {"global_step=", A::kStep, "step", ""},
    {"NODE_EXIT host=", A::kNodeExit, "node_exit", ""},
    {" JOB SUMMARY ", A::kSummary, "job_summary", ""},
    {"== Preflight ", A::kStage, "stage", ""},
    {"== Docker pull ", A::kStage, "stage", ""},
    {"== ECC check ", A::kStage, "stage", ""},
    {"== Training ", A::kStage, "stage", ""},
    {"Memstats: After", A::kMemstats, "memstats", ""},
    {"Using (GB) ", A::kMemstatsLine, "memstats", ""},
    {"Config param ", A::kConfig, "config", ""},
    {"Synchronizing hosts before training loop", A::kBarrier, "barrier", ""},
    // JAX coordination service.
    {"stopped sending heartbeats", A::kHeartbeat, "heartbeat_timeout", "heartbeat"},
    {"/job:jax_worker/replica:", A::kTaskRef, "task_ref", ""},
    {"The tasks have crashed", A::kSignature, "tasks_crashed", "heartbeat"},
    {"Polled error from coordination service", A::kOwnDeath, "own_death", ""},
    {"Terminating process because the JAX distributed service", A::kOwnDeath, "own_death", ""},
    {"heartbeat_timeout", A::kHeartbeatTimeout, "heartbeat_timeout_setting", ""},
    {"HEARTBEAT_TIMEOUT", A::kHeartbeatTimeout, "heartbeat_timeout_setting", ""},
    // Liveness monitors of other frameworks: a peer declared dead or missing (Ray's
    // failure detector, TensorFlow's HeartbeatManager, JAX barriers and task
    // registration, sample-factory's component heartbeats).
    {"missed too many heartbeats", A::kSignature, "peer_marked_dead", "heartbeat"},
    {"lame workers found", A::kSignature, "lame_workers", "heartbeat"},
    {"lack of heartbeats", A::kSignature, "no_heartbeat", "heartbeat"},
    {"No heartbeat for components", A::kSignature, "no_heartbeat", "heartbeat"},
    {"got no heartbeat", A::kSignature, "no_heartbeat", "heartbeat"},                // Spark master
    {"keep-alive heartbeat", A::kSignature, "no_heartbeat", "heartbeat"},            // torch elastic rendezvous
    {"failed to heartbeat", A::kSignature, "no_heartbeat", "heartbeat"},             // Dask worker
    {"eartbeat timeout", A::kSignature, "heartbeat_lost", "heartbeat", R::kNotASetting},
    {"eartbeat timed out", A::kSignature, "heartbeat_lost", "heartbeat"},
    {"Barrier timed out", A::kSignature, "barrier_timeout", "heartbeat"},
    {"RegisterTask", A::kSignature, "task_registration", "heartbeat", R::kDeadline},
    // …and the accused node saying it was alive when it was declared dead.
    {"mistakenly been marked as dead", A::kSignature, "accused_alive", "heartbeat_false_positive"},
    {"marked as dead", A::kSignature, "accused_alive", "heartbeat_false_positive"},
    {"DEADLINE_EXCEEDED: GetKeyValue", A::kSignature, "coordination_timeout", "coordination_timeout"},
    {"Coordination timeout", A::kSignature, "coordination_timeout", "coordination_timeout"},
    // RCCL/NCCL.
    {"NCCL WARN MSCCL++", A::kRcclWave, "rccl_init", ""},
    {"NCCL WARN Timeout", A::kSignature, "nccl_timeout", "nccl_error"},
    {"NCCL error:", A::kSignature, "nccl_error", "nccl_error"},
    {"NCCL error in", A::kSignature, "nccl_error", "nccl_error"},
    {"NCCL error (", A::kSignature, "nccl_error", "nccl_error"},
    {"Timeout waiting for", A::kSignature, "nccl_timeout", "nccl_error"},
    {"ncclSystemError", A::kSignature, "nccl_error", "nccl_error"},
    {"ncclInternalError", A::kSignature, "nccl_error", "nccl_error"},
    {"ncclUnhandledCudaError", A::kSignature, "nccl_error", "nccl_error"},
    {"ncclRemoteError", A::kSignature, "nccl_error", "nccl_error"},
    {"unhandled cuda error", A::kSignature, "nccl_error", "nccl_error"},
    {"Failed to CUDA calloc", A::kSignature, "rccl_memory_starvation", "nccl_error"},
    {"Watchdog caught collective operation timeout", A::kSignature, "nccl_watchdog_timeout", "nccl_error"},
    {"NCCL communicator was aborted", A::kSignature, "nccl_abort", "nccl_error"},
    {"NCCL FATAL ", A::kSignature, "nccl_fatal", "nccl_error", R::kNcclFatal},
    {"NCCL operation nccl", A::kSignature, "nccl_op_failed", "nccl_error"},
    {"NCCL WARN NET/", A::kSignature, "nccl_net_error", "nccl_error"},
    {"NCCL WARN Net : ", A::kSignature, "nccl_net_error", "nccl_error"},   // NCCL's socket layer (misc/socket.cc)
    {"gloo/transport", A::kSignature, "gloo_transport", "nccl_error", R::kNotPeerLost},
    // A collective that lost its peer: the peer's death is the cause, wherever it shows.
    {"Connection reset by peer", A::kSignature, "peer_lost", "nccl_error"},
    {"Connection closed by peer", A::kSignature, "peer_lost", "nccl_error"},
    {"Failed to auto-detect NCCL_SOCKET_IFNAME", A::kSignature, "nccl_socket_ifname", "nccl_nic_fail"},
    // Device memory.
    {"RESOURCE_EXHAUSTED", A::kSignature, "resource_exhausted", "oom"},
    {"Out of memory while trying to allocate", A::kSignature, "resource_exhausted", "oom"},
    {"OUT_OF_MEMORY", A::kSignature, "out_of_memory", "oom"},
    {"Resource exhausted:", A::kSignature, "resource_exhausted", "oom"},
    {"ResourceExhausted", A::kSignature, "resource_exhausted", "oom"},
    {"CUDA out of memory", A::kSignature, "cuda_oom", "oom"},
    {"OutOfMemoryError", A::kSignature, "cuda_oom", "oom", R::kNotHostMemory},
    // Ray's memory monitor kills tasks when the node's RAM runs out.
    {"running low on memory", A::kSignature, "ray_memory_monitor", "host_oom"},
    // Kubernetes evicting a pod under node memory pressure.
    {"low on resource: memory", A::kSignature, "k8s_memory_eviction", "host_oom"},
    {"CUDA error: out of memory", A::kSignature, "cuda_oom", "oom"},
    {"CUDA Error: out of memory", A::kSignature, "cuda_oom", "oom"},
    {"hipErrorOutOfMemory", A::kSignature, "hip_oom", "oom"},
    {"HSA_STATUS_ERROR_OUT_OF_RESOURCES", A::kSignature, "hsa_out_of_resources", "oom"},
    // Host memory.
    {"oom-kill event", A::kSignature, "oom_kill", "host_oom"},
    {"oom_kill event", A::kSignature, "oom_kill", "host_oom"},
    {"oom-kill:constraint", A::kSignature, "oom_kill", "host_oom"},
    {"invoked oom-killer", A::kSignature, "oom_kill", "host_oom"},
    {"Out of memory: Kill", A::kSignature, "kernel_oom_kill", "host_oom"},
    {"out of memory: Killed process", A::kSignature, "kernel_oom_kill", "host_oom"},
    // A host allocation refused (PyTorch's CPU allocator, ENOMEM from Python).
    {"DefaultCPUAllocator: can't allocate memory", A::kSignature, "host_alloc_failed", "host_oom"},
    {"[Errno 12] Cannot allocate memory", A::kSignature, "host_alloc_failed", "host_oom"},
    {"exceeded memory limit", A::kSignature, "memory_limit", "host_oom"},
    {"xceeded job memory limit", A::kSignature, "memory_limit", "host_oom"},
    {"xceeded step memory limit", A::kSignature, "memory_limit", "host_oom"},
    // bash's job-status line for a SIGKILLed child ("line 3: 4242 Killed   python3 …");
    // srun's own "task N: Killed" / "Out Of Memory" arrive through "srun: error: ".
    {" Killed      ", A::kSignature, "killed", "host_oom", R::kKilledLine},
    // GPU runtime and hardware.
    {"HSA_STATUS_ERROR", A::kSignature, "hsa_error", "gpu_hw_error", R::kNotOom},
    {"rocdevice.cpp", A::kSignature, "rocdevice_abort", "gpu_hw_error", R::kRocdeviceAbort},
    {"Memory access fault by GPU", A::kSignature, "gpu_memory_fault", "gpu_hw_error"},
    {"CUDA error: ", A::kSignature, "cuda_error", "gpu_hw_error", R::kNotCuInit},
    {"CUDA_ERROR_ILLEGAL", A::kSignature, "cuda_error", "gpu_hw_error", R::kNotCuInit},
    {"uncorrectable ECC error", A::kSignature, "ecc_uncorrectable", "gpu_hw_error"},
    {"illegal memory access", A::kSignature, "illegal_memory_access", "gpu_hw_error"},
    {"HIP error: ", A::kSignature, "hip_error", "gpu_hw_error", R::kNotOom},
    {"NVRM: Xid (PCI", A::kSignature, "nvidia_xid", "gpu_hw_error"},
    {"fallen off the bus", A::kSignature, "gpu_off_bus", "gpu_hw_error"},
    {"Unable to determine the device handle for GPU", A::kSignature, "gpu_lost", "gpu_hw_error"},
    // NIC / RDMA.
    {"ionic_comp_msn", A::kSignature, "ionic_cqe_error", "nic_error"},
    {"cqe with error", A::kSignature, "ionic_cqe_error", "nic_error"},
    // XLA.
    {"Failed to compile", A::kSignature, "xla_compile", "xla_compile_fail"},
    {"XLA compilation failed", A::kSignature, "xla_compile", "xla_compile_fail"},
    {"Unknown flag", A::kSignature, "xla_unknown_flag", "xla_compile_fail", R::kXlaFlag},
    // Checkpointing.
    {"Checkpointing failed", A::kSignature, "checkpoint_failed", "checkpoint_fs_error"},
    {"manifest.ocdbt.__lock", A::kSignature, "checkpoint_lock_enoent", "checkpoint_fs_error"},
    {"Saved a checkpoint at step", A::kCheckpointSaved, "checkpoint_saved", ""},
    {"restoring from this run's directory step", A::kRestore, "checkpoint_restore", ""},
    {"SingleReplicaArrayHandler", A::kSingleReplica, "single_replica_restore", ""},
    {"broadcast_one_replica_to_all", A::kSingleReplica, "single_replica_restore", ""},
    // Python.
    {"Traceback (most recent call last)", A::kTraceback, "traceback", "python_exception"},
    // C++'s report of an exception nobody caught (then SIGABRT): like a traceback, its
    // message (the next line's "what():") may be another class's evidence.
    {"terminate called", A::kTraceback, "cpp_terminate", "python_exception"},
    {"ChildFailedError", A::kSignature, "elastic_child_failed", "python_exception"},
    // A native crash of the training program (SIGABRT from a failed check, SIGSEGV).
    {"(core dumped)", A::kSignature, "core_dumped", "python_exception"},
    {"Error executing job with overrides", A::kSignature, "hydra_error", "python_exception"},
    // Termination from outside: a signal the launcher received (SIGHUP from a closed
    // terminal, Ctrl-C, SIGTERM) or a KeyboardInterrupt.
    {"death signal, shutting down workers", A::kSignature, "death_signal", "cancelled"},
    {"got signal: ", A::kSignature, "signal_received", "cancelled"},
    {"KeyboardInterrupt", A::kSignature, "keyboard_interrupt", "cancelled"},
    // Preemption and spot reclaims, whoever reports them (Slurm, submitit, clouds, Ray).
    {"is preempted", A::kSignature, "preempted", "preempted"},
    {"was preempted", A::kSignature, "preempted", "preempted"},
    {"been preempted", A::kSignature, "preempted", "preempted"},
    {"termination is imminent", A::kSignature, "spot_termination", "preempted"},
    {"interruption notice", A::kSignature, "spot_termination", "preempted"},
    // A node lost under the job.
    {"Node failure on", A::kSignature, "node_failure", "node_fail"},
    {"has lost communication with", A::kSignature, "mpi_daemon_lost", "node_fail"},
    {"due to agent failure", A::kSignature, "agent_lost", "node_fail"},             // Determined   // Open MPI ORTE/PRTE: a daemon (node) gone
    // IBM LSF's job report (bsub -o): the TERM_ reason, then "Exited with exit code N." or
    // "Successfully completed."; PBS/Torque's kill messages.
    {"TERM_OWNER:", A::kSignature, "lsf_killed_by_owner", "cancelled"},
    {"TERM_RUNLIMIT:", A::kSignature, "lsf_run_limit", "time_limit"},
    {"TERM_MEMLIMIT:", A::kSignature, "lsf_mem_limit", "host_oom"},
    {"TERM_PREEMPT:", A::kSignature, "lsf_preempted", "preempted"},
    {"TERM_REQUEUE_ADMIN:", A::kSignature, "lsf_requeued", "preempted"},
    {"PBS: job killed: walltime", A::kSignature, "pbs_walltime", "time_limit"},
    {"exceeded wallclock limit", A::kSignature, "moab_wallclock", "time_limit"},     // Moab
    {"PBS: job killed: mem", A::kSignature, "pbs_mem_limit", "host_oom"},
    // A process that died of SIGKILL as its launcher reports it (DeepSpeed's launcher,
    // torch elastic, multiprocessing, 128+9): the OOM killer's usual trace, but also what a
    // cancellation does, so it explains only what follows it (triage_root_cause.h).
    {"return code = -9", A::kSignature, "sigkill", "host_oom"},
    {"exitcode  : -9", A::kSignature, "sigkill", "host_oom"},
    {"Signals.SIGKILL", A::kSignature, "sigkill", "host_oom"},
    {"exit code 137", A::kSignature, "sigkill", "host_oom"},
    {"exited with code 137", A::kSignature, "sigkill", "host_oom"},
    {"node has died", A::kSignature, "node_died", "node_fail"},
    {"failed on node", A::kSignature, "task_launch_failed", "node_fail", R::kTaskLaunch},
    // How a launcher says the job ended ("Job end: … (exit code 0)", XPK, EXIT_CODE=).
    {"Job finished", A::kJobEnd, "job_end", ""},
    {"\nExited with exit code", A::kJobEnd, "job_end", ""},       // LSF
    {"\nSuccessfully completed.", A::kJobEnd, "job_end", ""},     // LSF
    {"exits with return code", A::kJobEnd, "job_end", ""},        // DeepSpeed launcher, per process
    {"exits successfully", A::kJobEnd, "job_end", ""},
    // The training loop's own end.
    {"Training finished", A::kTrainingEnd, "training_end", ""},
    {"Training complete", A::kTrainingEnd, "training_end", ""},
    {"steps reached", A::kTrainingEnd, "training_end", ""},              // "max training steps reached", "max_steps reached"
    {"`Trainer.fit` stopped", A::kTrainingEnd, "training_end", ""},
    // Ray actor.
    {"MaxTextTrainerActor", A::kRay, "ray", ""},
    {"Training subprocess killed by", A::kSignature, "subprocess_signal", "signal_kill"},
    {"Training subprocess exited with code", A::kSignature, "subprocess_exit", "subprocess_fail", R::kNonZeroSubprocess},
    {"Actor failed:", A::kSignature, "actor_failed", "actor_fail"},
    {"[Ray] HEAD failed to start", A::kSignature, "ray_head_failed", "ray_start_fail"},
    {"[Ray] HEAD timeout", A::kSignature, "ray_head_timeout", "ray_start_fail"},
    {"[Ray] WORKER failed", A::kSignature, "ray_worker_failed", "ray_start_fail"},
    {"Ray cluster failed, falling back", A::kSignature, "ray_fallback", "ray_start_fail"},
    {"[Prometheus] Started on port", A::kPrometheus, "prometheus", ""},
    // Launcher.
    {"[ERROR] Pull failed for", A::kSignature, "pull_failed", "container_pull_fail"},
    {"[ERROR] Authenticated pull failed", A::kSignature, "pull_failed", "container_pull_fail"},
    {"[ERROR] Login to", A::kSignature, "registry_login_failed", "container_pull_fail"},
    {"Unable to determine image name or ID from docker load", A::kSignature, "docker_load_failed", "container_load_fail"},
    {"No GPU devices detected", A::kSignature, "no_gpu", "no_gpu"},
    {"Could not find a free port for", A::kSignature, "no_free_port", "port_fail"},
    {"!!! Unknown model:", A::kSignature, "unknown_model", "model_not_found"},
    {"!!! Model name resolution failed", A::kSignature, "model_resolution_failed", "model_not_found"},
    {"[FAIL] Failed to check out", A::kSignature, "patch_checkout_failed", "patch_branch_fail"},
    {"died in prolog before writing any log", A::kSignature, "prolog_kill", "prolog_kill"},
    {"Unsafe NCCL_DMABUF_ENABLE", A::kSignature, "dmabuf_unsafe", "dmabuf_guard"},
    // Slurm.
    {"CANCELLED AT", A::kSlurmCancel, "slurm_cancel", ""},
    // "srun: error: <host>: task N: Exited with exit code C | Killed | Out Of Memory",
    // "srun: error: Node failure on <host>".
    {"srun: error: ", A::kSrunExit, "srun_error", ""},
    // Known-harmless lines (reference §3.7). A line containing one of these is never
    // counted as a failure, whatever else it mentions (the cuInit probe says "CUDA error").
    {"call to cuInit", A::kBenign, "benign", ""},
    {"MSCCL++: Feature not enabled", A::kBenign, "benign", ""},
    {"LL cutoff points not detected", A::kBenign, "benign", ""},
    {"Token indices sequence length is longer", A::kBenign, "benign", ""},
    {"OCI runtime exec failed", A::kBenign, "benign", ""},
    {"falling back to host-level kill", A::kBenign, "benign", ""},
    {"Sent SIGKILL to 0/0 processes", A::kBenign, "benign", ""},
    {"Cannot read CPU core", A::kBenign, "benign", ""},
    {"No hardware is found", A::kBenign, "benign", ""},
    {"No device identifiers found", A::kBenign, "benign", ""},
    {"event dependency logging", A::kBenign, "benign", ""},
    {"Fiber init: default domain", A::kBenign, "benign", ""},
    {"did not receive an exit event", A::kBenign, "benign", ""},
    {"is/are in a low-power state", A::kBenign, "benign", ""},
};

}  // namespace

const std::vector<LineSignature>& LineSignatures() {
  static const std::vector<LineSignature> table(std::begin(kLineSignatures), std::end(kLineSignatures));
  return table;
}

std::vector<std::string_view> BenignMarkers() {
  std::vector<std::string_view> out;
  for (const auto& s : LineSignatures())
    if (s.action == LineAction::kBenign) out.push_back(s.literal);
  return out;
}

}  // namespace mt::tools
