// stb's implementations for the Windows build: on Linux they come from Debian's libstb.so (libstb-dev),
// on Windows stb is used header-only, compiled once here.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_TRUETYPE_IMPLEMENTATION
#include <stb_image.h>
#include <stb_image_write.h>
#include <stb_truetype.h>
