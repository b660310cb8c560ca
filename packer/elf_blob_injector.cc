#include "packer/elf_blob_injector.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "base/file_util.h"
#include "packer/elf_blob_injector_state.h"

namespace sorun {
namespace blob_injection {

StatusOr<std::string> Injector::Run(BlobInjectionReport* report) {
  SORUN_RETURN_IF_ERROR_CTX(CheckArguments(), name_);
  SORUN_ASSIGN_OR_RETURN(image_, ElfImage::Parse(bytes(), in_.size(), name_));
  SORUN_RETURN_IF_ERROR(ReadHeader());
  SORUN_RETURN_IF_ERROR(ReadProgramHeaders());
  SORUN_RETURN_IF_ERROR(ReadDynamicSection());
  SORUN_RETURN_IF_ERROR(FindTables());
  SORUN_RETURN_IF_ERROR(CheckHashTables());
  SORUN_RETURN_IF_ERROR(PlanSymbols());
  SORUN_RETURN_IF_ERROR(Layout());
  SORUN_ASSIGN_OR_RETURN(std::string out, Write());
  SORUN_RETURN_IF_ERROR(VerifyOutput(out));
  if (report != nullptr) {
    *report = BlobInjectionReport{};
    report->segment_offset = seg_offset_;
    report->segment_address = seg_vaddr_;
    report->segment_bytes = seg_size_;
    report->blob_address = Address(blob_off_);
    report->blob_offset = blob_off_;
    report->blob_bytes = blob_.size();
    report->checksum_address = checksum_.empty() ? 0 : Address(checksum_off_);
    report->dynamic_symbols = dynsym_count_ + appended_;
    report->replaced_existing = appended_ < symbols_.size();
    report->converted_gnu_hash = has_gnu_hash_ && !has_hash_;
    report->dropped_gnu_hash = has_gnu_hash_ && has_hash_;
    report->program_headers_in_place = phdrs_in_place_;
    report->program_headers_moved_because = phdrs_in_place_ ? "" : phdrs_moved_reason_;
    report->moved_note_segments = moved_.size();
    report->output_bytes = out.size();
  }
  return out;
}

}  // namespace blob_injection

StatusOr<std::string> InjectBlobIntoElfImage(std::string_view input, const std::string& input_name,
                                             std::string_view blob, std::string_view checksum_record,
                                             const BlobInjectionOptions& options, BlobInjectionReport* report) {
  blob_injection::Injector injector(input, input_name, blob, checksum_record, options);
  return injector.Run(report);
}

Status InjectBlobIntoSharedLibrary(const std::string& input_so, const std::string& blob,
                                   const std::string& checksum_record, const std::string& output_so,
                                   const BlobInjectionOptions& options, BlobInjectionReport* report) {
  if (output_so.empty()) return InvalidArgument("empty output path");
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<MappedFile> input, MappedFile::Open(input_so));
  struct stat st;
  uint32_t mode = 0755;
  if (::stat(input_so.c_str(), &st) == 0) mode = st.st_mode & 0777;
  SORUN_ASSIGN_OR_RETURN(std::string out,
                         InjectBlobIntoElfImage(input->bytes(), input_so, blob, checksum_record, options, report));
  const std::string temp = output_so + ".tmp." + std::to_string(::getpid());
  Status written = WriteFileBytes(temp, out.data(), out.size(), mode, O_NOFOLLOW);
  if (written.ok() && std::rename(temp.c_str(), output_so.c_str()) != 0) {
    written = FailedPrecondition("cannot rename " + temp + " to " + output_so + ": " + ErrnoText(errno));
  }
  if (!written.ok()) {
    std::remove(temp.c_str());
    return written;
  }
  return Status::Ok();
}

}  // namespace sorun
