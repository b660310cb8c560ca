// Loads a model written by `sorun pack --sign signer.pem --encrypt model.key` with the C++ API and runs
// it once (docs/security.md "C++"): the decrypt hook streams the plaintext into an anonymous memory
// file, the verifier checks the Ed25519 signature before dlopen, so an altered or unsigned model is
// refused before any of its code runs.
//
//   encrypted_signed_model MODEL KEYFILE PUBLIC.pem
//
// Prints the first output's values (one per line, %.9g), exits 1 with the error on any failure.
#include <cstdio>
#include <iostream>

#include "api/sorun.h"
#include "security/model_encryption.h"
#include "security/model_signature.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: " << argv[0] << " MODEL KEYFILE PUBLIC.pem\n";
    return 2;
  }
  auto decrypt = sorun::security::AesGcmDecryptor(argv[2]);  // reads the key file once
  auto verify = sorun::security::Ed25519Verifier(argv[3]);   // reads the public key once
  if (!decrypt.ok() || !verify.ok()) {
    std::cerr << (decrypt.ok() ? verify.status() : decrypt.status()).ToString() << "\n";
    return 1;
  }
  sorun::RuntimeOptions options;
  options.decrypt = *decrypt;        // stored bytes -> plaintext, in memory only
  options.verify_library = *verify;  // the plaintext's signature, checked before dlopen
  auto model = sorun::Model::Load(argv[1], options);
  if (!model.ok()) {
    std::cerr << model.status().ToString() << "\n";  // PermissionDenied: refused, nothing of it ran
    return 1;
  }
  auto exec = model->NewExecutor();
  if (!exec.ok()) {
    std::cerr << exec.status().ToString() << "\n";
    return 1;
  }
  const sorun::TensorInfo& in = model->inputs()[0];
  auto input = sorun::NDArray::Empty(in.shape, in.dtype);
  if (!input.ok()) return 1;
  for (int64_t i = 0; i < input->num_elements(); ++i) input->data_as<float>()[i] = 0.01f * static_cast<float>(i % 100);
  auto outputs = exec->Run({{in.name, &input->dl()}});
  if (!outputs.ok()) {
    std::cerr << outputs.status().ToString() << "\n";
    return 1;
  }
  const sorun::NDArray& y = (*outputs)[0];
  for (int64_t i = 0; i < y.num_elements(); ++i) std::printf("%.9g\n", y.data_as<float>()[i]);
  return 0;
}
