// The library verifier behind the `sorun_public_key` parameter (config_parameters.h): the one place the
// backend turns a public key file into a sorun::LibraryVerifier (base/load_hooks.h) that
// RuntimeOptions::verify_library runs on a model's bytes before dlopen.
//
// The Ed25519 verifier itself is the optional //security:model_signature target
// (security::Ed25519Verifier), not yet on this branch: until the backend links it, MakeSignatureVerifier
// fails closed (Unimplemented, naming the parameter), so a model configured with a key never loads
// unchecked. Switching to the real verifier is a change to signature_verifier.cc and one dep in BUILD.
#ifndef SORUN_SERVING_TRITON_SIGNATURE_VERIFIER_H_
#define SORUN_SERVING_TRITON_SIGNATURE_VERIFIER_H_

#include <string>

#include "api/sorun.h"

namespace sorun::triton {

// True when this build checks signatures (links //security:model_signature).
bool SignatureCheckingBuiltIn();

// A verifier that accepts only libraries signed by the private key of `public_key_pem_path`.
// InvalidArgument naming the file when it cannot be read; Unimplemented when this build has no
// signature checking. Its refusals are PermissionDenied naming the model file.
StatusOr<LibraryVerifier> MakeSignatureVerifier(const std::string& public_key_pem_path);

}  // namespace sorun::triton

#endif  // SORUN_SERVING_TRITON_SIGNATURE_VERIFIER_H_
