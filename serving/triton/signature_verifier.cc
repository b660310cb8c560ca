#include "serving/triton/signature_verifier.h"

#include <fstream>

namespace sorun::triton {

bool SignatureCheckingBuiltIn() { return false; }

StatusOr<LibraryVerifier> MakeSignatureVerifier(const std::string& public_key_pem_path) {
  std::ifstream key(public_key_pem_path);
  if (!key) {
    return InvalidArgument("config.pbtxt parameter 'sorun_public_key' is '" + public_key_pem_path +
                           "': the file cannot be read");
  }
  // TODO(issue 25): return security::Ed25519Verifier(public_key_pem_path) once //security:model_signature
  // is on main, and make SignatureCheckingBuiltIn() true.
  return Unimplemented(
      "config.pbtxt parameter 'sorun_public_key' is set but this libtriton_sorun.so was built "
      "without signature checking (//security:model_signature is not linked): refusing to load "
      "the model unchecked");
}

}  // namespace sorun::triton
