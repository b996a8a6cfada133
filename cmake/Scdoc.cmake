# Script mode: renders the scdoc source INPUT into the man page OUTPUT with SCDOC. Nothing
# is left at OUTPUT when scdoc fails, so that the next build tries again.
get_filename_component(output_dir ${OUTPUT} DIRECTORY)
file(MAKE_DIRECTORY ${output_dir})
execute_process(COMMAND ${SCDOC} INPUT_FILE ${INPUT} OUTPUT_FILE ${OUTPUT}.tmp RESULT_VARIABLE status)
if(NOT status EQUAL 0)
    file(REMOVE ${OUTPUT}.tmp)
    message(FATAL_ERROR "scdoc could not render ${INPUT} (${status}); its message above names the line")
endif()
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
