"""The chakrakit wheel, built offline from this source tree with Debian's setuptools:

    pip wheel native/python --no-build-isolation --no-deps -w dist/

CMake builds the module and the chakra binary (in CHAKRA_BUILD_DIR, default build/python-wheel
under the source tree; an existing native build directory is reused as it is), installs them into
a staging prefix, and the wheel holds that tree's package, the binary (chakrakit/bin) and its
share/chakrakit (the suite, the examples and, where the wasm build made it, the web page), so that
everything the functions find beside the binary is in the wheel too. Nothing is downloaded."""

import glob
import os
import re
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(chakrakit VERSION ([0-9.]+)", f.read()).group(1)


BUILD = os.path.abspath(os.environ.get("CHAKRA_BUILD_DIR") or os.path.join(ROOT, "build", "python-wheel"))
SETUPTOOLS_WORK = os.path.join(BUILD, "setuptools")  # its build/ and egg-info, out of the source tree
os.makedirs(SETUPTOOLS_WORK, exist_ok=True)


class BuildWithCMake(build_py):
    def run(self):
        build = BUILD
        if not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
            subprocess.check_call(
                ["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DCHAKRA_BUILD_TESTS=OFF",
                 "-DCHAKRA_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"]
            )
        subprocess.check_call(["cmake", "--build", build, "--target", "chakrakit_core", "chakra", "-j", str(os.cpu_count() or 1)])
        stage = os.path.join(build, "wheel-stage")
        shutil.rmtree(stage, ignore_errors=True)
        subprocess.check_call(["cmake", "--install", build, "--prefix", stage], stdout=subprocess.DEVNULL)
        package = glob.glob(os.path.join(stage, "lib", "python3*", "*-packages", "chakrakit"))
        if len(package) != 1:
            raise RuntimeError(f"cmake --install put no chakrakit package under {stage}/lib (is the module built?)")
        target = os.path.join(self.build_lib, "chakrakit")
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(package[0], target)
        os.makedirs(os.path.join(target, "bin"))
        for program in ("chakra", "chakra-replay"):
            if os.path.isfile(os.path.join(stage, "bin", program)):
                shutil.copy2(os.path.join(stage, "bin", program), os.path.join(target, "bin", program))
        shutil.copytree(os.path.join(stage, "share", "chakrakit"), os.path.join(target, "share", "chakrakit"))


class BinaryDistribution(Distribution):
    """The wheel holds a compiled module: tagged for this Python and platform."""

    def has_ext_modules(self):
        return True


setup(
    name="chakrakit",
    version=version(),
    description="Chakra execution traces in Python: read, analyse (HTA's analyses), simulate, sweep",
    packages=["chakrakit"],
    package_dir={"chakrakit": "chakrakit"},
    python_requires=">=3.9",
    install_requires=["numpy", "pandas"],
    cmdclass={"build_py": BuildWithCMake},
    distclass=BinaryDistribution,
    zip_safe=False,
    options={"build": {"build_base": os.path.join(SETUPTOOLS_WORK, "build")}, "egg_info": {"egg_base": SETUPTOOLS_WORK}},
)
