"""Models whose file arrives in the load request ("file:1/model.so", base64, with "config"): Triton writes
the files to a temporary directory of its own, and the backend loads such a model from memory
(sorun::Model::LoadFromMemory, a sealed memfd), so nothing stays mapped from that directory. And the
per-model signature check (`sorun_public_key`): a model that is not signed by the key fails alone."""
import base64
import json
import os
import re
import shutil
import struct
import subprocess

import numpy as np
import pytest
import tritonclient.http as httpclient

from conftest import TRITON_DTYPES, add_model, explicit_config, sorun_inspect, sorun_run, zoo_path

SIGNATURE_MAGIC = b"~sorun signed~\0\0"  # security/model_signature.h: signature (64), length (8, LE), magic (16)


def mlp_input():
    return np.load(os.path.join(os.environ["ZOO_DIR"], "mlp_input.npy"))


def http_infer(server, model, x):
    client = httpclient.InferenceServerClient(server.http_url)
    try:
        i = httpclient.InferInput("data", list(x.shape), "FP32")
        i.set_data_from_numpy(x)
        return client.infer(model, [i]).as_numpy("softmax")
    finally:
        client.close()


def config_json(model_path, parameters=None):
    """The model configuration as Triton's load API takes it (JSON of model_config.proto)."""
    inputs, outputs = sorun_inspect(model_path)

    def entries(tensors):
        return [{"name": t["name"], "data_type": "TYPE_" + TRITON_DTYPES[t["dtype"]], "dims": t["shape"]}
                for t in tensors]

    config = {"backend": "sorun", "max_batch_size": 0, "input": entries(inputs), "output": entries(outputs)}
    if parameters:
        config["parameters"] = {k: {"string_value": v} for k, v in parameters.items()}
    return json.dumps(config)


def load_with_file(server, name, library_bytes, config):
    body = {"parameters": {"config": config, "file:1/model.so": base64.b64encode(library_bytes).decode()}}
    return server.request("POST", "/v2/repository/models/%s/load" % name, body, timeout=120)


def maps_lines(pid):
    with open("/proc/%d/maps" % pid) as f:
        return f.read().splitlines()


def test_file_override_is_loaded_from_memory(start_server, tmp_path):
    repo = str(tmp_path / "repo")
    add_model(repo, "mlp_file", zoo_path("mlp"), explicit_config(zoo_path("mlp")))
    server = start_server(repo, ["--model-control-mode=explicit", "--load-model=mlp_file"], name="override")
    library = open(zoo_path("mlp"), "rb").read()
    status, body = load_with_file(server, "mlp_mem", library, config_json(zoo_path("mlp")))
    assert status == 200, (body, server.log_tail())
    # The index lists the repository's models only; a model from the request has no directory there.
    assert server.repository_index()["mlp_file"]["state"] == "READY"
    status, _ = server.request("GET", "/v2/models/mlp_mem/ready")
    assert status == 200, server.log_tail()

    x = mlp_input()
    served = http_infer(server, "mlp_mem", x)
    np.testing.assert_array_equal(served, http_infer(server, "mlp_file", x))
    np.testing.assert_array_equal(served, sorun_run(zoo_path("mlp"), {"data": x}, str(tmp_path / "ref"))[0])

    # The backend says where the bytes came from: Triton's temporary directory, loaded from memory.
    log = server.log_text()
    found = re.search(r"model 'mlp_mem' version 1: loaded from memory \((\S+/1/model\.so), files from the load "
                      r"request\)", log)
    assert found, server.log_tail()
    temp_dir = os.path.dirname(os.path.dirname(found.group(1)))
    assert not temp_dir.startswith(repo), temp_dir
    assert "model 'mlp_file' version 1: loaded from the file (%s)" % os.path.join(repo, "mlp_file", "1", "model.so") \
        in log
    # Nothing is mapped from Triton's temporary directory; the library is a sorun memfd. The repository
    # model keeps its file mapping (page-cache sharing unchanged).
    maps = maps_lines(server.pid)
    assert not [line for line in maps if temp_dir in line], [line for line in maps if temp_dir in line]
    assert [line for line in maps if "memfd:sorun:model.so" in line], "no sorun memfd mapping"
    assert [line for line in maps if line.endswith(os.path.join(repo, "mlp_file", "1", "model.so"))]

    # Unload and load again from the request: still serves; the server stays up.
    status, body = server.request("POST", "/v2/repository/models/mlp_mem/unload")
    assert status == 200, body
    status, body = load_with_file(server, "mlp_mem", library, config_json(zoo_path("mlp")))
    assert status == 200, body
    np.testing.assert_array_equal(http_infer(server, "mlp_mem", x), served)
    assert server.alive()


def test_load_from_memory_parameter_for_a_repository_model(start_server, tmp_path):
    repo = str(tmp_path / "repo")
    add_model(repo, "mlp", zoo_path("mlp"), explicit_config(
        zoo_path("mlp"), extra='parameters: { key: "load_from_memory" value: { string_value: "true" } }\n'))
    add_model(repo, "bad", zoo_path("mlp"), 'parameters: { key: "load_from_memory" value: { string_value: "yes" } }\n')
    server = start_server(repo, name="memparam")
    index = server.repository_index()
    assert index["mlp"]["state"] == "READY", index["mlp"]
    assert "parameter 'load_from_memory' is 'yes': use true, false or auto" in index["bad"]["reason"]
    x = mlp_input()
    np.testing.assert_array_equal(http_infer(server, "mlp", x),
                                  sorun_run(zoo_path("mlp"), {"data": x}, str(tmp_path / "ref"))[0])
    path = os.path.join(repo, "mlp", "1", "model.so")
    assert "model 'mlp' version 1: loaded from memory (%s)" % path in server.log_text()
    assert not [line for line in maps_lines(server.pid) if line.endswith(path)]


def openssl(*args):
    result = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result


def sign(library, private_key, work):
    """`library` + the sorun signature trailer (security/model_signature.h), signed with the openssl CLI."""
    data = os.path.join(work, "unsigned.bin")
    sig = os.path.join(work, "sig.bin")
    with open(data, "wb") as f:
        f.write(library)
    openssl("pkeyutl", "-sign", "-rawin", "-inkey", private_key, "-in", data, "-out", sig)
    signature = open(sig, "rb").read()
    assert len(signature) == 64
    return library + signature + struct.pack("<Q", len(library)) + SIGNATURE_MAGIC


def test_public_key_parameter_refuses_unsigned_models(start_server, tmp_path):
    if not shutil.which("openssl"):
        pytest.skip("no openssl CLI to make the Ed25519 key")
    work = str(tmp_path / "keys")
    os.makedirs(work)
    private_key = os.path.join(work, "key.pem")
    public_key = os.path.join(work, "key.pub.pem")
    openssl("genpkey", "-algorithm", "ed25519", "-out", private_key)
    openssl("pkey", "-in", private_key, "-pubout", "-out", public_key)
    library = open(zoo_path("mlp"), "rb").read()
    signed = sign(library, private_key, work)
    altered = bytearray(signed)
    altered[library.find(b"GraphExecutorFactory") + 40000] ^= 0xFF  # a weight byte, inside the signed bytes
    files = {}
    for name, data in {"signed": signed, "unsigned": library, "altered": bytes(altered)}.items():
        files[name] = os.path.join(work, name + ".so")
        with open(files[name], "wb") as f:
            f.write(data)

    repo = str(tmp_path / "repo")
    key_param = 'parameters: { key: "sorun_public_key" value: { string_value: "%s" } }\n' % public_key
    add_model(repo, "plain", zoo_path("mlp"), explicit_config(zoo_path("mlp")))
    for name, path in files.items():
        add_model(repo, name, path, explicit_config(zoo_path("mlp"), extra=key_param))
    add_model(repo, "nokey", zoo_path("mlp"), explicit_config(
        zoo_path("mlp"), extra=key_param.replace(public_key, os.path.join(work, "missing.pem"))))
    server = start_server(repo, name="signature")
    index = server.repository_index()

    # Whatever this build can check, a model without the key's signature never serves, and the others do.
    x = mlp_input()
    reference = sorun_run(zoo_path("mlp"), {"data": x}, str(tmp_path / "ref"))[0]
    assert index["plain"]["state"] == "READY", index["plain"]
    np.testing.assert_array_equal(http_infer(server, "plain", x), reference)
    assert "'sorun_public_key' is '%s'" % os.path.join(work, "missing.pem") in index["nokey"]["reason"]
    for name in ("unsigned", "altered"):
        assert index[name]["state"] == "UNAVAILABLE", index[name]
        assert "model '%s' version 1" % name in index[name]["reason"]
        status, _ = server.request("GET", "/v2/models/%s/ready" % name)
        assert status != 200
    # The signed model serves like the unsigned file; the others are refused
    # with sorun's PermissionDenied message naming the file.
    assert index["signed"]["state"] == "READY", index["signed"]
    np.testing.assert_array_equal(http_infer(server, "signed", x), reference)
    for name in ("unsigned", "altered"):
        reason = index[name]["reason"]
        assert os.path.join(repo, name, "1", "model.so") in reason, reason
        assert "signature" in reason, reason
    assert server.alive()

