# The -c opt model-zoo targets the Python tests read (sourced by run_python_tests.sh and run_wheel_matrix.sh):
# ZOO_TARGETS, the .so / .tar of each model and its three-file form.
ZOO_TARGETS=()
for m in mlp cnn resblock digits chain10k mlp_opencl cnn_tar; do ZOO_TARGETS+=("//testdata/models:$m"); done
for m in mlp cnn resblock digits chain10k mlp_opencl; do ZOO_TARGETS+=("//testdata/models:${m}_files"); done
