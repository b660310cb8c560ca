#include "serving/triton/config_parameters.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace sorun::triton {
namespace {

TEST(ConfigParametersTest, DefaultsWithoutParameters) {
  StatusOr<SorunParameters> p = ParseSorunParameters({}, "");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->model_file, "model.so");
  EXPECT_EQ(p->device, "");
  EXPECT_EQ(p->num_threads, 0);
  EXPECT_FALSE(p->verify_checksum.has_value());
  EXPECT_TRUE(p->warmup);
  EXPECT_EQ(p->load_from, SorunParameters::LoadFrom::kAuto);
  EXPECT_EQ(p->public_key_path, "");
  EXPECT_FALSE(p->cuda_graph);
}

TEST(ConfigParametersTest, LoadFromMemoryAndPublicKey) {
  for (const auto& [value, expected] :
       std::map<std::string, SorunParameters::LoadFrom>{{"true", SorunParameters::LoadFrom::kMemory},
                                                        {"1", SorunParameters::LoadFrom::kMemory},
                                                        {"false", SorunParameters::LoadFrom::kFile},
                                                        {"0", SorunParameters::LoadFrom::kFile},
                                                        {"auto", SorunParameters::LoadFrom::kAuto}}) {
    StatusOr<SorunParameters> p = ParseSorunParameters({{"load_from_memory", value}}, "");
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->load_from, expected) << value;
  }
  StatusOr<SorunParameters> p = ParseSorunParameters({{"sorun_public_key", "/keys/models.pub.pem"}}, "");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->public_key_path, "/keys/models.pub.pem");
}

TEST(ConfigParametersTest, ReadsEveryParameter) {
  StatusOr<SorunParameters> p = ParseSorunParameters({{"model_file", "resnet.so"},
                                                      {"device", "opencl:1"},
                                                      {"num_threads", "3"},
                                                      {"verify_checksum", "true"},
                                                      {"warmup", "0"},
                                                      {"cuda_graph", "true"}},
                                                     "ignored.so");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->model_file, "resnet.so");  // the parameter wins over default_model_filename
  EXPECT_EQ(p->device, "opencl:1");
  EXPECT_EQ(p->num_threads, 3);
  EXPECT_EQ(p->verify_checksum, std::optional<bool>(true));
  EXPECT_FALSE(p->warmup);
  EXPECT_TRUE(p->cuda_graph);
}

TEST(ConfigParametersTest, DefaultModelFilenameIsUsed) {
  StatusOr<SorunParameters> p = ParseSorunParameters({}, "model.tar");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->model_file, "model.tar");
}

void ExpectError(const std::map<std::string, std::string>& parameters, const std::string& fragment) {
  StatusOr<SorunParameters> p = ParseSorunParameters(parameters, "");
  ASSERT_FALSE(p.ok()) << fragment;
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find(fragment), std::string::npos) << p.status().ToString();
}

TEST(ConfigParametersTest, RejectsBadValuesNamingKeyAndValue) {
  ExpectError({{"num_threads", "0"}}, "parameter 'num_threads' is '0': use a whole number from 1 to 1024");
  ExpectError({{"num_threads", "2x"}}, "'num_threads' is '2x'");
  ExpectError({{"num_threads", "99999"}}, "'num_threads' is '99999'");
  ExpectError({{"num_threads", ""}}, "'num_threads' is ''");
  ExpectError({{"verify_checksum", "yes"}}, "'verify_checksum' is 'yes': use true or false");
  ExpectError({{"warmup", "TRUE"}}, "'warmup' is 'TRUE'");
  ExpectError({{"cuda_graph", "on"}}, "'cuda_graph' is 'on'");
  ExpectError({{"device", "tpu"}}, "parameter 'device' is 'tpu'");
  ExpectError({{"model_file", "../other/model.so"}}, "'model_file' is '../other/model.so'");
  ExpectError({{"model_file", ".."}}, "'model_file' is '..'");
  ExpectError({{"load_from_memory", "yes"}}, "'load_from_memory' is 'yes': use true, false or auto");
  ExpectError({{"sorun_public_key", ""}}, "'sorun_public_key' is '': use the absolute path");
  ExpectError({{"sorun_public_key", "keys/k.pem"}}, "'sorun_public_key' is 'keys/k.pem'");
  ExpectError({{"threads", "2"}}, "unknown parameter 'threads'; the sorun backend accepts model_file, device");
}

TEST(ConfigParametersTest, RejectsDefaultModelFilenameWithDirectory) {
  StatusOr<SorunParameters> p = ParseSorunParameters({}, "/etc/passwd");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("'default_model_filename' is '/etc/passwd'"), std::string::npos);
}

}  // namespace
}  // namespace sorun::triton
