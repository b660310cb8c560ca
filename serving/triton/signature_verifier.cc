#include "serving/triton/signature_verifier.h"

#include <utility>

#include "security/model_signature.h"

namespace sorun::triton {

StatusOr<LibraryVerifier> MakeSignatureVerifier(const std::string& public_key_pem_path) {
  auto verifier = security::Ed25519Verifier(public_key_pem_path);
  if (!verifier.ok())
    return std::move(verifier).status().Annotate("config.pbtxt parameter 'sorun_public_key' is '" +
                                                 public_key_pem_path + "'");
  return verifier;
}

}  // namespace sorun::triton
