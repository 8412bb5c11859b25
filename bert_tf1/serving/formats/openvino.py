"""OpenVINO IR (`model.xml`, `model.bin`) of the numeric SavedModel."""
import numpy as np
import openvino

FILES = ("model.xml", "model.bin")


def convert(numeric, numeric_dir, out_dir, int8=False):
    """Writes `out_dir/model.xml` and `.bin` (fp32 weights; int8: NNCF
    weight compression, which needs no calibration data); returns the
    `export_info.json` fields of the tool and precision."""
    model = openvino.convert_model(numeric_dir)
    if int8:
        import nncf

        model = nncf.compress_weights(model)
    openvino.save_model(model, f"{out_dir}/model.xml", compress_to_fp16=False)
    return {"tool": f"openvino {openvino.__version__}",
            "precision": "int8 weights (NNCF)" if int8 else "float32"}


class Runner:
    """The IR in `folder` on the CPU, computing in float32 (OpenVINO's
    default on a bf16-capable CPU is bf16: 7.6e-4 off on the fixture)."""

    def __init__(self, folder, precision="f32"):
        self.model = openvino.Core().compile_model(
            f"{folder}/model.xml", "CPU",
            {"INFERENCE_PRECISION_HINT": precision})

    def __call__(self, **inputs):
        outputs = self.model(inputs)
        return {key.get_any_name(): np.asarray(value)
                for key, value in outputs.items()}
