#!/usr/bin/python3
"""Writes the script that walks every step of a tour (tests/gui/tour_test.sh), with the conditions
each step must meet once it is on screen, worked out here from the tour and scene files themselves
(not from the app): the scene or model, stage, layer, head, pinned row, view and lab.

usage: tour_walk.py TOUR.json ASSETS_DIR > walk.script"""
import json
import os
import sys

tour_path, assets = sys.argv[1], sys.argv[2]
tour = json.load(open(tour_path))


def resolve(p):
    if p.startswith("/"):
        return p
    if p.startswith("assets/"):
        return os.path.join(assets, p[len("assets/"):])
    return os.path.join(os.path.dirname(tour_path), p)


def q(v):
    return json.dumps(v)


out = []
steps = tour["steps"]
for k, step in enumerate(steps, start=1):
    conds = [f"tour.step == {k}", "tour.on_screen == true", "updating == false"]
    land = {}
    scene = None
    if "scene" in step:
        path = resolve(step["scene"])
        scene = json.load(open(path))
        for key in ("layer", "head", "pin", "stage", "view"):
            if key in scene:
                land[key] = scene[key]
        named = step.get("named_head")
        if named:
            land.update({key: v for key, v in scene["named_heads"][named].items()})
        # the scene's file name, as the app reports the path it opened
        conds.append("scene_path ~ " + q("/" + os.path.basename(path)))
    else:
        conds.append('scene_path == ""')
    for key in ("layer", "head", "pin", "stage", "view"):
        if key in step and step[key] != "scene":
            land[key] = step[key]
    model = scene.get("model") if scene else step.get("model")
    if model:
        conds += ["model_active == true", "model_dir ~ " + q("/" + os.path.basename(model.rstrip("/")))]
        conds.append(f"model_layer == {land.get('layer', 0)}")
        text = step.get("model_text") or land.get("text") or (scene or {}).get("model_text")
        if text:
            conds.append("model_text == " + q(text))
    else:
        conds.append("model_active == false")
    if "head" in land:
        conds.append(f"head == {land['head']}")
    if "pin" in land:
        conds.append(f"pinned_row == {land['pin']}")
    if "stage" in land:
        conds.append("stage == " + q(land["stage"]))
    conds.append("view == " + q(land.get("view") or "stage"))
    if "set" in step and "temperature" in step["set"]:
        conds.append(f"temperature == {step['set']['temperature']}")
    if "lab" in step:
        conds.append("labs ~ " + q(step["lab"]))
    out.append(f"# step {k}: {step['title']}")
    out.append("wait " + " && ".join(conds) + " timeout 200")
    # (a frame or two more: the panel's buttons are where this step's text puts them, not the last's)
    out.append("frames 2")
    if k == 3:
        # Leave the step to explore (the next stage), then come back to it: the step is kept.
        out += ["key Right", "wait tour.step == 3 && tour.on_screen == false", "frames 2",
                "click widget tour_show_again 0.5 0.5", "wait " + " && ".join(conds), "frames 2",
                # Back, then Next again
                "click widget tour_back 0.5 0.5", "wait tour.step == 2 && tour.on_screen == true", "frames 2",
                "click widget tour_next 0.5 0.5", "wait " + " && ".join(conds), "frames 2"]
    if k < len(steps):
        out.append("click widget tour_next 0.5 0.5")
# Help ▸ Tour after the last step starts the tour again at step 1.
out += ["click widget menu_Help 0.5 0.5", "frames 2", "wait widgets.menu_tour != null",
        "click widget menu_tour 0.5 0.5",
        "wait tour.step == 1 && tour.on_screen == true && tour.open == true", "quit"]
print("\n".join(out))
