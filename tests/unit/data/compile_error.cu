// The error below is on line 3; the tests check that the log says so.
extern "C" __global__ void broken(float* out) {
  out[0] = kernc_undeclared_identifier;
}
