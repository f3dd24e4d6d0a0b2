/* XNNPACK: one clamp operator run 3 times, then one never set up (which
 * XNNPACK refuses to run); prints a checksum and the refusal's status. Run by
 * tests/e2e/test_cpulibs.c with and without the preload. */
#include <stdio.h>

#include <xnnpack.h>

int main(void)
{
    if (xnn_initialize(NULL) != xnn_status_success) {
        printf("xnn_initialize failed\n");
        return 1;
    }
    float in[4 * 8], out[4 * 8];
    for (int i = 0; i < 32; i++)
        in[i] = (float)(i - 16) / 4.0f;
    xnn_operator_t op = NULL;
    if (xnn_create_clamp_nc_f32(8, 8, 8, -1.0f, 2.0f, 0, &op) != xnn_status_success ||
        xnn_setup_clamp_nc_f32(op, 4, in, out, NULL) != xnn_status_success)
        return 1;
    double sum = 0;
    for (int r = 0; r < 3; r++) {
        if (xnn_run_operator(op, NULL) != xnn_status_success)
            return 1;
        for (int i = 0; i < 32; i++)
            sum += out[i];
    }
    printf("clamp %.4f\n", sum);
    xnn_delete_operator(op);
    if (xnn_create_clamp_nc_f32(8, 8, 8, -1.0f, 2.0f, 0, &op) != xnn_status_success)
        return 1;
    printf("run before setup %d\n", (int)xnn_run_operator(op, NULL));
    xnn_delete_operator(op);
    return 0;
}
