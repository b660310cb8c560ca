// The Relax fuzz body (fuzz_targets.h): container and VM executable readers of relax/.
#include <string>

#include "fuzz/fuzz_common.h"
#include "fuzz/fuzz_targets.h"
#include "relax/library_blob.h"
#include "relax/vm_disassembler.h"
#include "relax/vm_executable.h"

namespace sorun {
namespace fuzz {
namespace {

// Parses one executable payload and, when valid, runs everything built on the model.
void FuzzExecutablePayload(const uint8_t* data, size_t size, relax::ConstantTagDialect dialect) {
  auto exec = relax::ParseVmExecutable(data, size, dialect);
  if (!exec.ok()) {
    Note("relax", exec.status());
    return;
  }
  FUZZ_CHECK(exec->instructions.size() == exec->instr_offset.size(), "one decoded instruction per offset");
  FUZZ_CHECK(relax::ValidateVmExecutable(*exec).ok(), "a parsed executable validates again");
  for (const relax::VmConstant& c : exec->constants) {
    if (c.kind == relax::VmConstantKind::kTensor && c.data_bytes != 0) {
      FUZZ_CHECK(c.data >= data && c.data + c.data_bytes <= data + size, "tensor data inside the payload");
    }
  }
  auto is_kernel = [](const std::string& name) { return name.size() % 2 == 0; };
  const auto callees = relax::ClassifyFunctions(*exec, is_kernel);
  FUZZ_CHECK(callees.size() == exec->functions.size(), "one class per function");
  Note("relax", relax::CheckCalleesSupported(*exec, callees));
  const std::string text = relax::Disassemble(*exec, is_kernel);
  FUZZ_CHECK(!text.empty(), "disassembly");
  auto inputs = relax::DescribeInputs(*exec);
  if (inputs.ok())
    FUZZ_CHECK(inputs->size() == exec->functions[exec->FindFunction("main")].param_names.size(), "inputs");
}

}  // namespace

int FuzzRelax(const uint8_t* data, size_t size) {
  Init();
  if (size < 1) return 0;
  // Byte 0 selects the input: 0/1/2 a blob symbol of each generation, 3 a bare executable payload
  // (bit 2: enum constant tags, else tvm-ffi tags).
  const uint8_t selector = data[0];
  ++data;
  --size;
  const int mode = selector & 3;
  if (mode == 3) {
    FuzzExecutablePayload(
        data, size, (selector & 4) ? relax::ConstantTagDialect::kLegacyEnum : relax::ConstantTagDialect::kFfiTypeIndex);
    return 0;
  }
  static const char* const kSymbols[] = {keys::kSymbolDevMblob, keys::kSymbolFfiLibraryBin,
                                         keys::kSymbolFfiLibraryBinV22};
  auto blob = relax::ParseLibraryBlob(data, size, kSymbols[mode]);
  if (!blob.ok()) {
    Note("relax", blob.status());
    return 0;
  }
  FUZZ_CHECK(8 + blob->payload_size <= size, "payload inside the symbol");
  for (const relax::LibraryBlobModule& m : blob->modules) {
    if (m.payload == nullptr) continue;
    FUZZ_CHECK(m.payload >= data && m.payload + m.payload_size <= data + size, "module payload inside the symbol");
    if (relax::IsRelaxExecutableTypeKey(m.type_key)) {
      FuzzExecutablePayload(m.payload, static_cast<size_t>(m.payload_size),
                            relax::UsesFfiConstantTags(blob->generation) ? relax::ConstantTagDialect::kFfiTypeIndex
                                                                         : relax::ConstantTagDialect::kLegacyEnum);
    }
  }
  Note("relax", relax::RootExecutable(*blob).status());
  return 0;
}

}  // namespace fuzz
}  // namespace sorun
