// The root-cause rule of triage: from the candidate classes the evidence proves to the one
// class that explains the others.
//
// Two kinds of evidence:
//  * causes whose report may arrive after their consequences (a post-mortem): memory
//    exhaustion (the kernel's or slurmstepd's OOM report comes after the peers' NCCL
//    errors), GPU/NIC hardware, a lost node, launcher stages. They explain everything else
//    in the log whatever the order; among several, the fixed priority decides.
//  * ordered events: a traceback, a collective error or timeout, a lost heartbeat, silence
//    (hang), a signal or cancellation from outside, preemption, the time limit. The first
//    one in the log explains those after it (a hang then a heartbeat is a hang; a SIGHUP
//    then a traceback is a cancellation; an exception then a scancel is the exception).
// A traceback whose exception line proves another class belongs to that class.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/logs/log_scanner.h"

namespace mt::tools {

struct Ev {
  std::string file;
  LineRef ref;
  std::string signature;
};

struct Candidate {
  std::vector<Ev> evidence;   // earliest first
  uint64_t count = 0;
  bool terminal = false;      // the job did not go on after it
};
using Candidates = std::map<std::string, Candidate>;

// Causes first, in the order in which they explain each other.
const std::vector<std::string>& ClassPriority();
// Whether a class is a cause that may be reported after its consequences.
bool IsPostMortemCause(const std::string& cls);

// 0: a cause or an event; 1: a launcher's report that a stage, subprocess or task failed
// (names the place, not the cause); 2: only the peers' "connection reset/closed by peer"
// (someone else died). Tier 1 and 2 evidence decides only when nothing of a lower tier is
// in the log, whatever the order (wrappers print their reports late, srun early).
int ConsequenceTier(const std::string& cls, const Candidate& c);

struct RootCause {
  std::string cls;            // empty when no terminal candidate
  std::string rule;           // the rule that chose it, in words
};

// `primary`: the display name of the main log (evidence order is by line there, by time
// across files). `skip`: classes not eligible (e.g. a heartbeat after a hang).
RootCause PickRootCause(const Candidates& cands, const std::string& primary, const std::vector<std::string>& skip);

// The rule in words (the output's `root_cause_rule`).
const char* RootCauseRuleText();

}  // namespace mt::tools
