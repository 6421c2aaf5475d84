/* Holds a file open without sharing it (as some Windows programs do) for N seconds:
 *   locker.exe FILE SECONDS      prints "locked" once it holds the file. For tests/windows/wine_test.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

int wmain(int argc, wchar_t** argv) {
    if (argc < 3) return 2;
    HANDLE h = CreateFileW(argv[1], GENERIC_READ, 0, NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        printf("cannot open: %lu\n", GetLastError());
        return 1;
    }
    printf("locked\n");
    fflush(stdout);
    Sleep((DWORD)(_wtoi(argv[2]) * 1000));
    CloseHandle(h);
    return 0;
}
