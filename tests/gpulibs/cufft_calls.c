/* Calls cuFFT plan and exec entry points with known sizes and prints each
 * returned status. Without a GPU the plans cannot be made. */
#include <cufft.h>
#include <stdio.h>

#define SHOW(name, call) printf("%s %d\n", name, (int)(call))

int main(void)
{
    cufftHandle p1 = 0, p2 = 0, p3 = 0, pm = 0, h = 0;
    int n[2] = {64, 32};
    size_t ws = 0;
    cufftComplex *c = NULL;
    SHOW("cufftPlan1d", cufftPlan1d(&p1, 1024, CUFFT_C2C, 8));
    SHOW("cufftPlan2d", cufftPlan2d(&p2, 256, 128, CUFFT_R2C));
    SHOW("cufftPlan3d", cufftPlan3d(&p3, 16, 32, 64, CUFFT_Z2Z));
    SHOW("cufftPlanMany", cufftPlanMany(&pm, 2, n, NULL, 1, 0, NULL, 1, 0, CUFFT_C2C, 5));
    SHOW("cufftCreate", cufftCreate(&h));
    printf("handle %d\n", (int)h);
    SHOW("cufftExecC2C", cufftExecC2C(p1, c, c, CUFFT_FORWARD));
    SHOW("cufftMakePlan2d", cufftMakePlan2d(h, 100, 200, CUFFT_D2Z, &ws));
    SHOW("cufftExecD2Z", cufftExecD2Z(h, NULL, NULL));
    SHOW("cufftDestroy", cufftDestroy(h));
    return 0;
}
