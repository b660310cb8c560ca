#include "packer/relax_pack.h"

#include <cstdio>
#include <utility>

#include "base/file_util.h"
#include "format/binary_reader.h"
#include "format/binary_writer.h"
#include "inspect/elf_reader.h"
#include "packer/elf_blob_injector.h"
#include "runtime/registry_keys.h"
#include "serialization/blob_checksum.h"

namespace sorun {
namespace relax {
namespace {

// The blob symbols, newest generation first.
constexpr const char* kBlobSymbols[] = {keys::kSymbolFfiLibraryBinV22, keys::kSymbolFfiLibraryBin,
                                        keys::kSymbolDevMblob};

// The first blob symbol `image` defines, or "".
std::string DefinedBlobSymbol(const ElfImage& image) {
  for (const char* name : kBlobSymbols) {
    if (image.HasSymbol(name)) return name;
  }
  return "";
}

struct ParsedRelaxBlob {
  LibraryBlob blob;
  const LibraryBlobModule* root = nullptr;
};

StatusOr<ParsedRelaxBlob> ParseRelaxBlob(const uint8_t* symbol, uint64_t size, std::string_view name,
                                         const BlobPayloadHandler& device_payloads) {
  ParsedRelaxBlob parsed;
  // Legacy layouts hand every payload without a length to the handler, in order: module 0 there is a
  // root that is not a Relax executable (a GraphExecutorFactory, ...), which no device parser should see.
  const BlobPayloadHandler handler = [&](size_t index, const std::string& type_key, BinaryReader& reader) -> Status {
    if (index == 0) {
      return NotFound(std::string(name) + ": the root module 0 is '" + type_key +
                      "', not a Relax VM executable (relax.VMExecutable / relax.Executable)");
    }
    if (!device_payloads) {
      return Unimplemented("module " + std::to_string(index) + " ('" + type_key +
                           "') of a legacy container needs a device payload parser");
    }
    return device_payloads(index, type_key, reader);
  };
  SORUN_ASSIGN_OR_RETURN(parsed.blob, ParseLibraryBlob(symbol, size, name, handler));
  SORUN_ASSIGN_OR_RETURN(parsed.root, RootExecutable(parsed.blob));
  return parsed;
}

void PutU64(std::string* bytes, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) (*bytes)[at + static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

StatusOr<RealignedBlob> RealignLibraryBlob(const uint8_t* symbol, uint64_t symbol_size, std::string_view symbol_name,
                                           const BlobPayloadHandler& device_payloads) {
  SORUN_ASSIGN_OR_RETURN(ParsedRelaxBlob parsed, ParseRelaxBlob(symbol, symbol_size, symbol_name, device_payloads));
  const LibraryBlobModule& root = *parsed.root;
  const ConstantTagDialect dialect =
      UsesFfiConstantTags(parsed.blob.generation) ? ConstantTagDialect::kFfiTypeIndex : ConstantTagDialect::kLegacyEnum;
  const std::string section = std::string(symbol_name) + " module 0 ('" + root.type_key + "')";
  SORUN_ASSIGN_OR_RETURN(VmExecutable exec, ParseVmExecutable(root.payload, static_cast<size_t>(root.payload_size),
                                                              dialect, section, root.payload_offset));
  // The symbol starts at an aligned address in the output, so the payload's origin is its offset.
  SORUN_ASSIGN_OR_RETURN(RealignedExecutable realigned, RealignVmConstants(exec, dialect, root.payload_offset));

  // Splice: [prefix .. the payload's length) + new length + new payload + the rest of the container.
  // Containers store no offsets and no sizes but the length prefixes, so nothing else changes.
  const uint64_t end = 8 + parsed.blob.payload_size;
  const uint64_t after = root.payload_offset + root.payload_size;
  RealignedBlob out;
  out.generation = parsed.blob.generation;
  out.executable_payload_offset = root.payload_offset;
  out.report = realigned.report;
  out.blob.reserve(static_cast<size_t>(end - root.payload_size + realigned.payload.size()));
  out.blob.append(reinterpret_cast<const char*>(symbol), static_cast<size_t>(root.payload_offset - 8));
  out.blob.append(8, '\0');
  PutU64(&out.blob, out.blob.size() - 8, realigned.payload.size());
  out.blob.append(realigned.payload);
  out.blob.append(reinterpret_cast<const char*>(symbol + after), static_cast<size_t>(end - after));
  PutU64(&out.blob, 0, out.blob.size() - 8);

  // The new container parses, in the same generation, with the executable where it was.
  auto check =
      ParseRelaxBlob(reinterpret_cast<const uint8_t*>(out.blob.data()), out.blob.size(), symbol_name, device_payloads);
  if (!check.ok()) return Internal("the realigned container does not parse: " + check.status().ToString());
  if (check->root->payload_offset != root.payload_offset || check->blob.generation != parsed.blob.generation) {
    return Internal("the realigned container moved its executable");
  }
  return out;
}

StatusOr<bool> IsRelaxExport(const std::string& path, const BlobPayloadHandler& device_payloads) {
  SORUN_ASSIGN_OR_RETURN(ElfImage image, ElfImage::ReadFile(path));
  const std::string symbol = DefinedBlobSymbol(image);
  if (symbol.empty()) return false;
  SORUN_ASSIGN_OR_RETURN(ElfSymbolData data, image.FindSymbolData(symbol));
  auto parsed = ParseRelaxBlob(data.data, data.size, symbol, device_payloads);
  if (parsed.ok()) return true;
  if (parsed.status().code() == StatusCode::kNotFound) return false;
  return std::move(parsed).status().Annotate(path);
}

StatusOr<RelaxPackReport> PackRelaxLibrary(const std::string& input_so, const std::string& output_so,
                                           const RelaxPackOptions& options) {
  SORUN_ASSIGN_OR_RETURN(ElfImage image, ElfImage::ReadFile(input_so));
  RelaxPackReport report;
  report.blob_symbol = DefinedBlobSymbol(image);
  if (report.blob_symbol.empty()) {
    return InvalidArgument(input_so + ": not a Relax VM export: it defines none of " + keys::kSymbolFfiLibraryBinV22 +
                           " (TVM 0.22+), " + keys::kSymbolFfiLibraryBin + " (0.21) and " + keys::kSymbolDevMblob +
                           " (0.16 - 0.20)");
  }
  auto data = image.FindSymbolData(report.blob_symbol);
  if (!data.ok()) return std::move(data).status().Annotate(input_so);
  auto realigned = RealignLibraryBlob(data->data, data->size, report.blob_symbol, options.device_payloads);
  if (!realigned.ok()) {
    Status s = std::move(realigned).status();
    if (s.code() == StatusCode::kNotFound) {
      return InvalidArgument(input_so + ": not a Relax VM export: " + s.message());
    }
    return s.Annotate(input_so);
  }
  report.generation = realigned->generation;
  report.realign = realigned->report;
  report.old_blob_bytes = data->size;
  report.new_blob_bytes = realigned->blob.size();
  if (options.checksum) report.checksum_record = MakeBlobChecksumRecord(realigned->blob);

  BlobInjectionOptions inject;
  inject.blob_symbol = report.blob_symbol;
  inject.replace_existing = true;
  BlobInjectionReport injected;
  SORUN_RETURN_IF_ERROR(
      InjectBlobIntoSharedLibrary(input_so, realigned->blob, report.checksum_record, output_so, inject, &injected));
  if (injected.blob_address % kConstantDataAlignment != 0 || injected.blob_offset % kConstantDataAlignment != 0) {
    std::remove(output_so.c_str());
    return Internal(output_so + ": the injector placed " + report.blob_symbol + " at address " +
                    std::to_string(injected.blob_address) + ", file offset " + std::to_string(injected.blob_offset) +
                    " (not 64-byte aligned)");
  }
  report.blob_file_offset = injected.blob_offset;
  report.blob_address = injected.blob_address;
  report.output_bytes = injected.output_bytes;
  return report;
}

}  // namespace relax
}  // namespace sorun
