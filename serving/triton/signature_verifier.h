// The library verifier behind the `sorun_public_key` parameter (config_parameters.h): the one place the
// backend turns a public key file into a sorun::LibraryVerifier (base/load_hooks.h) that
// RuntimeOptions::verify_library runs on a model's bytes before dlopen. The Ed25519 check itself is
// //security:model_signature (security::Ed25519Verifier; docs/security.md).
#ifndef SORUN_SERVING_TRITON_SIGNATURE_VERIFIER_H_
#define SORUN_SERVING_TRITON_SIGNATURE_VERIFIER_H_

#include <string>

#include "api/sorun.h"

namespace sorun::triton {

// A verifier that accepts only libraries signed by the private key of `public_key_pem_path`.
// InvalidArgument naming the parameter and the file when the key cannot be read or is not an Ed25519
// public key. Its refusals are PermissionDenied naming the model file. Thread-safe.
StatusOr<LibraryVerifier> MakeSignatureVerifier(const std::string& public_key_pem_path);

}  // namespace sorun::triton

#endif  // SORUN_SERVING_TRITON_SIGNATURE_VERIFIER_H_
