"""run_main.sh's precision: bfloat16 where the CPU multiplies it natively
(avx512_bf16 or amx_bf16 in /proc/cpuinfo), float32 elsewhere,
BERT_MAIN_PRECISION to force one, a flag given by the user above both.

Checked through BERT_MAIN_DRY_RUN=1 (the run_classifier.py arguments,
printed, no set-up and no training) with fake cpuinfo files
(BERT_MAIN_CPUINFO).
"""
import os
import subprocess

import pytest

from tests.conftest import REPO_ROOT

# The first and the last processor of a 2-core Zen 3 and of a Zen 4 / Sapphire
# Rapids-like CPU, as Linux writes them ("vmx flags" must not be read).
_ZEN3_FLAGS = ("fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov "
               "pat pse36 clflush mmx fxsr sse sse2 ht syscall nx mmxext "
               "fxsr_opt pdpe1gb rdtscp lm rep_good nopl cpuid fma avx2 bmi2 "
               "erms invpcid rdseed adx smap clflushopt clwb sha_ni xsaveopt "
               "vaes vpclmulqdq rdpid fsrm")
_AVX512_BF16_FLAGS = _ZEN3_FLAGS + (" avx512f avx512dq avx512cd avx512bw "
                                    "avx512vl avx512_bf16 avx512_vnni")
_AMX_FLAGS = _ZEN3_FLAGS + " avx512f amx_bf16 amx_tile amx_int8"


def _cpuinfo(flags, vmx_flags=""):
    blocks = []
    for processor in (0, 1):
        blocks.append(f"processor\t: {processor}\nvendor_id\t: AuthenticAMD\n"
                      f"flags\t\t: {flags}\n"
                      + (f"vmx flags\t: {vmx_flags}\n" if vmx_flags else "")
                      + "bugs\t\t: sysret_ss_attrs\n")
    return "\n".join(blocks)


def _dry_run(tmp_path, *args, cpuinfo_text=None, precision=None):
    """(returncode, the run_classifier.py arguments, stderr) of
    `BERT_MAIN_DRY_RUN=1 bash run_main.sh *args`."""
    env = dict(os.environ, BERT_MAIN_DRY_RUN="1",
               VENV=str(tmp_path / "no_venv"))
    env.pop("BERT_MAIN_PRECISION", None)
    if cpuinfo_text is None:
        env["BERT_MAIN_CPUINFO"] = str(tmp_path / "no_cpuinfo")
    else:
        path = tmp_path / "cpuinfo"
        path.write_text(cpuinfo_text)
        env["BERT_MAIN_CPUINFO"] = str(path)
    if precision is not None:
        env["BERT_MAIN_PRECISION"] = precision
    process = subprocess.run(
        ["bash", str(REPO_ROOT / "run_main.sh"), *args], cwd=tmp_path,
        env=env, capture_output=True, text=True, timeout=60)
    return process.returncode, process.stdout.splitlines(), process.stderr


def _precision_flags(arguments):
    return [a for a in arguments if "mixed_precision" in a]


@pytest.mark.parametrize("flags,found", [(_AVX512_BF16_FLAGS, "avx512_bf16"),
                                         (_AMX_FLAGS, "amx_bf16")])
def test_a_cpu_with_native_bfloat16_fine_tunes_in_bfloat16(
        tmp_path, flags, found):
    code, arguments, stderr = _dry_run(tmp_path, cpuinfo_text=_cpuinfo(flags))
    assert code == 0, stderr
    assert _precision_flags(arguments) == ["--mixed_precision=bfloat16"]
    assert stderr.count("\n") == 1 and "fine-tuning in bfloat16" in stderr
    assert f"{found} in {tmp_path / 'cpuinfo'}" in stderr


@pytest.mark.parametrize("cpuinfo_text", [
    _cpuinfo(_ZEN3_FLAGS),
    # Only a hypervisor's "vmx flags" line naming it: the CPU has none.
    _cpuinfo(_ZEN3_FLAGS, vmx_flags="avx512_bf16 amx_bf16"),
    # No "flags" line at all (e.g. an ARM CPU's "Features").
    "processor\t: 0\nFeatures\t: fp asimd bf16\n"])
def test_a_cpu_without_native_bfloat16_fine_tunes_in_float32(
        tmp_path, cpuinfo_text):
    code, arguments, stderr = _dry_run(tmp_path, cpuinfo_text=cpuinfo_text)
    assert code == 0, stderr
    assert _precision_flags(arguments) == ["--mixed_precision=float32"]
    assert stderr.count("\n") == 1 and "fine-tuning in float32" in stderr
    assert "no avx512_bf16 or amx_bf16 in" in stderr


def test_without_a_cpuinfo_file_float32(tmp_path):
    code, arguments, stderr = _dry_run(tmp_path)
    assert code == 0, stderr
    assert _precision_flags(arguments) == ["--mixed_precision=float32"]
    assert f"no {tmp_path / 'no_cpuinfo'} to read" in stderr


@pytest.mark.parametrize("flags,forced", [(_AVX512_BF16_FLAGS, "float32"),
                                          (_ZEN3_FLAGS, "bfloat16")])
def test_bert_main_precision_overrides_the_detection(tmp_path, flags, forced):
    code, arguments, stderr = _dry_run(
        tmp_path, cpuinfo_text=_cpuinfo(flags), precision=forced)
    assert code == 0, stderr
    assert _precision_flags(arguments) == [f"--mixed_precision={forced}"]
    assert f"BERT_MAIN_PRECISION={forced}" in stderr


def test_bert_main_precision_auto_detects(tmp_path):
    code, arguments, _ = _dry_run(
        tmp_path, cpuinfo_text=_cpuinfo(_AMX_FLAGS), precision="auto")
    assert code == 0
    assert _precision_flags(arguments) == ["--mixed_precision=bfloat16"]


def test_an_unknown_bert_main_precision_is_one_line(tmp_path):
    code, arguments, stderr = _dry_run(
        tmp_path, cpuinfo_text=_cpuinfo(_ZEN3_FLAGS), precision="fp8")
    assert code == 2 and arguments == []
    assert stderr == ("run_main.sh: BERT_MAIN_PRECISION=fp8: expected auto, "
                      "float32 or bfloat16.\n")


@pytest.mark.parametrize("given", [
    ["--mixed_precision=float16"], ["--mixed_precision", "float32"],
    ["--use_mixed_precision"], ["--use_mixed_precision=false"]])
def test_a_precision_flag_given_to_the_script_wins(tmp_path, given):
    code, arguments, stderr = _dry_run(
        tmp_path, *given, "--num_train_epochs=0.1",
        cpuinfo_text=_cpuinfo(_AVX512_BF16_FLAGS), precision="bfloat16")
    assert code == 0, stderr
    assert _precision_flags(arguments) == [given[0]]
    assert arguments[-len(given) - 1:] == [*given, "--num_train_epochs=0.1"]
    assert stderr == (f"run_main.sh: precision as given on the command line "
                      f"({given[0]}).\n")


def test_the_dry_run_prints_the_recipe_and_sets_nothing_up(tmp_path):
    code, arguments, stderr = _dry_run(
        tmp_path, "--data_dir=data", "--output_dir=out",
        cpuinfo_text=_cpuinfo(_ZEN3_FLAGS))
    assert code == 0, stderr
    assert "--data_dir=data/glue/SST-2" in arguments
    assert "--output_dir=out" in arguments
    assert "--init_checkpoint=<all-MiniLM-L6-v2>/bert_model.ckpt" in arguments
    assert "--group_by_length" in arguments
    assert not (tmp_path / "no_venv").exists()
