"""Code3's own spec-kit templates (spec-kit's sections, our wording), shipped as package data.

`{{slot|question}}` is filled by the spec writer; a slot it cannot fill becomes
`[NEEDS CLARIFICATION: question]`. spec-kit's own placeholders (`[FEATURE NAME]`, `[###-feature-name]`,
`[FEATURE]`, `[DATE]`, `$ARGUMENTS`) are filled too, so a directory of spec-kit templates
(`SPEC_KIT_TEMPLATES_DIR`) works as it is.
"""
