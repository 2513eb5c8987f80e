.PHONY: main test setup docs export clean
main:   ## set up and run the main job (smoke train + evaluate on a CPU)
	bash tools/main.sh
test:   ## set up and run every test CI runs
	bash tools/test.sh
setup:  ## .venv, packages and CIFAR data only (what main and test start with)
	bash tools/setup.sh
docs: setup  ## run the notebooks, then build the offline docs site into _docs/ (npm the first time: MathJax)
	.venv/bin/python tools/run_nbs.py --save _proc_exec; .venv/bin/python tools/build_docs.py --exec-dir _proc_exec
export: ## notebooks -> library, then clean notebooks
	.venv/bin/nbdev_export && .venv/bin/nbdev_clean
clean:  ## remove the built site and the executed notebooks
	rm -rf _docs _proc_exec
