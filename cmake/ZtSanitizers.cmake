# ZT_SANITIZE=address adds ASan+UBSan, =thread adds TSan, to every target.
if(ZT_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(ZT_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT ZT_SANITIZE STREQUAL "")
  message(FATAL_ERROR "ZT_SANITIZE must be empty, 'address' or 'thread', got '${ZT_SANITIZE}'")
endif()
