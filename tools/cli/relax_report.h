// The Relax sections of `sorun inspect` (docs/cli.md): a RelaxInspection (inspect/inspect_report.h)
// as text — executable, functions, main's inputs and outputs, constants with their alignment, called
// functions, and the verdict — and as the "relax" object of `inspect --json`. Pure functions;
// reentrant.
#ifndef SORUN_TOOLS_CLI_RELAX_REPORT_H_
#define SORUN_TOOLS_CLI_RELAX_REPORT_H_

#include <string>

#include "inspect/inspect_report.h"
#include "tools/cli/json_util.h"

namespace sorun {
namespace cli {

// The text sections of a Relax report after the module tree: executable, functions, inputs,
// constants, callees; and the verdict lines ("runnable by sorun: yes" or the refusals).
std::string RelaxInspectionToText(const RelaxInspection& r);
std::string RelaxVerdictToText(const RelaxInspection& r);
// The "relax" object of `inspect --json`.
void WriteRelaxInspectionJson(JsonWriter& w, const RelaxInspection& r);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_RELAX_REPORT_H_
